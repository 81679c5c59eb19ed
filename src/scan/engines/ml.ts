/**
 * The `ml` engine, two models:
 *
 *  - PE and ELF (full coverage): standardised static features fed to logistic regression.
 *    Weights from scripts/train-ml.ts in src/scan/models/static-ml.json. The training data is
 *    thin and its malicious side synthetic (docs/ml-model.md), so findings are capped at
 *    'medium' and their confidence never exceeds the precision measured on the held-out split.
 *  - Everything of partial coverage (scripts, text, documents, archives and their members):
 *    a Platt-calibrated logistic regression over hashed word and character n-grams, trained by
 *    scripts/train-script-ml.ts on public offensive and admin scripts
 *    (src/scan/models/script-ml.json). It reads the text, or for binary formats the printable
 *    strings, in windows of SCRIPT_WINDOW characters: all of it, the score is the worst window.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Engine, EngineContext, EngineOutput, FileType, ScanSubject } from '../types';
import { makeFinding } from '../static/common';
import { round2 } from '../rounding';
import { extractStrings, STRING_READERS } from '../static/strings';
import type { FileAnalysis } from '../file-analysis';
import { EngineTimeoutError } from '../runner';
import { classifierText, LogisticModel, type PromptInjectionModel } from './payload/pi-classifier';
import { stripComments } from './script-normalize';
import { sectionContaining, type PeInfo } from './pe';
import type { ElfInfo } from './elf';

const ENGINE = 'ml';
/**
 * Held-out precision is measured against a synthetic malicious side, so it overstates real-world
 * precision; confidence is additionally capped here (docs/ml-model.md).
 */
export const CONFIDENCE_CAP = 0.6;

/** Imports that the model counts as suspicious (lower-case, without A/W suffix). */
const SUSPICIOUS_IMPORTS = new Set([
  'virtualallocex', 'writeprocessmemory', 'createremotethread', 'ntunmapviewofsection', 'setthreadcontext', 'queueuserapc',
  'setwindowshookex', 'getasynckeystate', 'isdebuggerpresent', 'checkremotedebuggerpresent', 'urldownloadtofile',
  'internetopen', 'internetopenurl', 'winexec', 'shellexecute', 'createtoolhelp32snapshot', 'process32first', 'minidumpwritedump',
  'cryptencrypt', 'adjusttokenprivileges', 'openprocess', 'virtualprotect', 'loadlibrary', 'getprocaddress',
  'ptrace', 'process_vm_writev', 'dup2', 'execve', 'connect', 'socket', 'fork', 'setsid', 'mprotect', 'inet_addr', 'system', 'popen',
]);

const SUSPICIOUS_STRING = /cmd\.exe|powershell|\/bin\/sh|\/dev\/tcp|wget |curl |chmod \+x|crontab|\.bashrc|schtasks|CurrentVersion\\Run|lsass|mimikatz|stratum\+tcp|\.onion\b|VirtualBox|vmware|keylog|passw/i;
const URL_OR_IP = /https?:\/\/|(?:^|[^\d.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?:[^\d.]|$)/;

export const FEATURE_NAMES = [
  'is_pe', 'log_size', 'num_sections', 'max_entropy', 'mean_entropy', 'high_entropy_fraction', 'exec_entropy',
  'log_imports', 'log_libraries', 'log_exports', 'suspicious_imports', 'suspicious_import_fraction', 'wx', 'entry_anomaly',
  'overlay_ratio', 'signed', 'no_symbols', 'static', 'packer_marker', 'strings_per_kb', 'url_ip_strings', 'suspicious_strings', 'mean_string_len',
] as const;

export type FeatureVector = number[];

function normImport(name: string): string {
  const n = name.toLowerCase().replace(/^_+/, '');
  return n.replace(/(?<=[a-z])(?:a|w|exa|exw)$/, (s) => (s.startsWith('ex') ? 'ex' : ''));
}

function stringStats(file: FileAnalysis): [number, number, number, number] {
  const buf = file.content;
  const strings = file.strings('mlFeatures');
  let urls = 0;
  let sus = 0;
  let total = 0;
  for (const s of strings) {
    total += s.length;
    if (URL_OR_IP.test(s)) urls++;
    if (SUSPICIOUS_STRING.test(s)) sus++;
  }
  const kb = Math.max(1, Math.min(buf.length, STRING_READERS.mlFeatures.maxBytes) / 1024);
  return [Math.min(50, strings.length / kb), Math.log1p(urls), Math.log1p(sus), strings.length ? total / strings.length : 0];
}

function peVector(pe: PeInfo, file: FileAnalysis): FeatureVector {
  const buf = file.content;
  const secs = pe.sections.filter((s) => s.rawSize > 0);
  const ent = secs.map((s) => s.entropy);
  const rawTotal = secs.reduce((a, s) => a + s.rawSize, 0) || 1;
  const highFrac = secs.filter((s) => s.entropy >= 7).reduce((a, s) => a + s.rawSize, 0) / rawTotal;
  const execEnt = Math.max(0, ...secs.filter((s) => s.executable).map((s) => s.entropy));
  const fns = pe.importNames.map((n) => normImport(n.slice(n.indexOf('!') + 1)));
  const sus = fns.filter((f) => SUSPICIOUS_IMPORTS.has(f)).length;
  const ep = pe.entryPoint !== 0 ? sectionContaining(pe, pe.entryPoint) : undefined;
  const epAnomaly = pe.entryPoint !== 0 && !pe.isDotNet && (!ep || !ep.executable) ? 1 : 0;
  const packer = pe.sections.some((s) => /^UPX|^\.aspack|^MPRESS|^\.vmp|^\.themida|^\.petite/i.test(s.name)) ? 1 : 0;
  return [
    1, Math.log2(buf.length + 1), Math.min(pe.sections.length, 20),
    ent.length ? Math.max(...ent) : 0, ent.length ? ent.reduce((a, b) => a + b, 0) / ent.length : 0, highFrac, execEnt,
    Math.log1p(fns.length), Math.log1p(pe.imports.length), Math.log1p(pe.exports.length), Math.min(sus, 20), fns.length ? sus / fns.length : 0,
    pe.sections.some((s) => s.executable && s.writable) ? 1 : 0, epAnomaly,
    buf.length ? pe.overlaySize / buf.length : 0, pe.hasCertificate ? 1 : 0, 0, 0, packer,
    ...stringStats(file),
  ];
}

function elfVector(elf: ElfInfo, file: FileAnalysis): FeatureVector {
  const buf = file.content;
  const secs = elf.sections.filter((s) => s.size > 0 && s.type !== 8);
  const loads = elf.segments.filter((s) => s.type === 1 && s.fileSize > 0);
  const ent = secs.length ? secs.map((s) => s.entropy) : loads.map((s) => s.entropy);
  const sizes = secs.length ? secs.map((s) => s.size) : loads.map((s) => s.fileSize);
  const rawTotal = sizes.reduce((a, b) => a + b, 0) || 1;
  const highFrac = ent.reduce((a, e, i) => a + (e >= 7 ? sizes[i] : 0), 0) / rawTotal;
  const execEnt = secs.length
    ? Math.max(0, ...secs.filter((s) => (s.flags & 4) !== 0).map((s) => s.entropy))
    : Math.max(0, ...loads.filter((s) => (s.flags & 1) !== 0).map((s) => s.entropy));
  const fns = elf.importedSymbols.map(normImport);
  const sus = fns.filter((f) => SUSPICIOUS_IMPORTS.has(f)).length;
  const isExec = elf.type === 2 || elf.type === 3;
  const inExec = elf.segments.some((s) => s.type === 1 && (s.flags & 1) !== 0 && elf.entry >= s.vaddr && elf.entry < s.vaddr + s.memSize);
  return [
    0, Math.log2(buf.length + 1), Math.min(elf.sections.length, 20) ,
    ent.length ? Math.max(...ent) : 0, ent.length ? ent.reduce((a, b) => a + b, 0) / ent.length : 0, highFrac, execEnt,
    Math.log1p(fns.length), Math.log1p(elf.needed.length), Math.log1p(elf.exportedSymbols.length), Math.min(sus, 20), fns.length ? sus / fns.length : 0,
    elf.segments.some((s) => s.type === 1 && (s.flags & 3) === 3) ? 1 : 0, isExec && elf.entry !== 0 && !inExec ? 1 : 0,
    0, 0, elf.hasSymtab ? 0 : 1, isExec && !elf.interpreter && !elf.hasDynamic ? 1 : 0, elf.upxMarker ? 1 : 0,
    ...stringStats(file),
  ];
}

/** Feature vector for a PE or ELF file, null for other content. Shared with scripts/train-ml.ts. */
export function extractMlFeatures(file: FileAnalysis): { format: 'pe' | 'elf'; vector: FeatureVector } | null {
  const pe = file.pe();
  if (pe) return { format: 'pe', vector: peVector(pe, file) };
  const elf = file.elf();
  if (elf) return { format: 'elf', vector: elfVector(elf, file) };
  return null;
}

export interface StaticMlModel {
  kind: 'logistic_regression';
  features: string[];
  mean: number[];
  std: number[];
  weights: number[];
  bias: number;
  threshold: number;
  /** Held-out figures written by the training script; confidence never exceeds precision. */
  heldOut: { precision: number; recall: number; accuracy: number; n: number };
  trainedAt: string;
}

export function predict(model: StaticMlModel, v: FeatureVector): number {
  let z = model.bias;
  for (let i = 0; i < model.weights.length; i++) z += model.weights[i] * ((v[i] - model.mean[i]) / (model.std[i] || 1));
  return 1 / (1 + Math.exp(-z));
}

export const MODEL_PATH = path.join(__dirname, '..', 'models', 'static-ml.json');

function loadModel(): StaticMlModel | null {
  try {
    const m = JSON.parse(fs.readFileSync(MODEL_PATH, 'utf8')) as StaticMlModel;
    if (m.kind !== 'logistic_regression' || m.weights.length !== FEATURE_NAMES.length || m.features.join() !== FEATURE_NAMES.join()) return null;
    return m;
  } catch {
    return null;
  }
}

/** Loaded once when the module is first imported. */
const MODEL = loadModel();

export const SCRIPT_MODEL_PATH = path.join(__dirname, '..', 'models', 'script-ml.json');
/** Characters the text model scores at once; longer content is scored window by window. */
export const SCRIPT_WINDOW = 64 * 1024;
/** Content the model reads as text (the rest: its printable strings). */
const TEXT_TYPES: ReadonlySet<FileType> = new Set<FileType>(['powershell', 'javascript', 'vbscript', 'batch', 'shell', 'python', 'php', 'html', 'text']);
/** Languages the model was trained on; elsewhere (JavaScript, HTML, prose) a hit stays low. */
export const TRAINED_TYPES: ReadonlySet<FileType> = new Set<FileType>(['powershell', 'batch', 'shell', 'python', 'text']);
/**
 * Calibrated probability from which a hit is medium. Between the threshold and this the model
 * is right on its validation sources but not reliably on unseen ones (small wrapper scripts
 * scored 0.7-0.8 in the benign sweep), so it stays low and only adds to other engines.
 */
export const ML_MEDIUM_FROM = 0.9;
/**
 * Below this many words a text is a one-liner: few n-grams carry its score, so the model speaks
 * on it only from the stricter medium level the training script sets on short validation texts
 * (`training.shortMediumFrom`), and never low.
 */
export const ML_MIN_WORDS = 12;
export const wordCount = (text: string): number => text.match(/[A-Za-z]{2,}/g)?.length ?? 0;
/**
 * A short text the model may judge at all: a command line of at least five words in at least
 * three space-separated fields. Fewer is too little evidence (a two-line `exec grep -r "$@"`
 * wrapper, a one-field config entry); the rules still read them.
 */
export const judgeableShortText = (text: string): boolean => wordCount(text) >= 5 && text.trim().split(/\s+/).length >= 3 && !onlyUnjudgedCommands(text);

/**
 * Commands the model is not asked about when a short text is made only of them; the rules still
 * read them (a read of /etc/shadow, of saved passwords, a security agent's service deleted or a
 * firewall switched off are theirs to flag):
 *  - commands that only read, list, query or open a settings dialog (ATT&CK discovery, and
 *    everyday troubleshooting): a `reg query`, `net user`, `Get-*`, `grep` or `ps` changes
 *    nothing, and the model saw attack collections full of them;
 *  - an administrator's undo of persistence (a scheduled task, Run value or service removed): the
 *    attack collections' clean-up steps look like them, but removing an autostart is not an attack;
 *  - a protection switched on, and MSBuild building a project through a standard target (below).
 */
const UNJUDGED_COMMAND = new RegExp([
  String.raw`schtasks(?:\.exe)?\s+\/(?:delete|end)\b`, String.raw`(?:unregister|disable)-scheduledtask\b`,
  String.raw`reg(?:\.exe)?\s+delete\s+"?hk(?:lm|cu|ey_local_machine|ey_current_user)\\software\\(?:wow6432node\\)?microsoft\\windows\\currentversion\\(?:run|runonce|uninstall)\b`,
  String.raw`remove-itemproperty\b[^\n]*\\currentversion\\run(?:once)?\b`,
  String.raw`sc(?:\.exe)?\s+(?:\\\\\S+\s+)?(?:stop|delete)\s`, String.raw`remove-service\b`,
  String.raw`reg(?:\.exe)?\s+query\b`,
  // `net user NAME` lists; `net user NAME PASSWORD`, `/add`, `/delete`, `/active` change accounts.
  String.raw`net1?(?:\.exe)?\s+(?:user|group|localgroup)(?:\s+(?:"[^"\n]*"|[^\s/"]+))?(?:\s+\/(?!add\b|delete\b|del\b|active\b)\w+)*\s*$`,
  String.raw`net1?(?:\.exe)?\s+(?:view|session|statistics|accounts\s*(?:\/domain)?\s*$|share\s*$|time(?![^\n]*\/set))`,
  String.raw`netsh(?:\.exe)?\s[^\n]*\bshow\b`, String.raw`sc(?:\.exe)?\s+(?:query|qc)\b`, String.raw`schtasks(?:\.exe)?\s+\/query\b`,
  // wmic reads with get/list, but `/format:` with anything but its own formats runs an XSL script
  // (the T1220 LOLBin), so that is judged.
  String.raw`wmic(?:\.exe)?\s(?![^\n]*\b(?:call|create|delete|set)\b)(?![^\n]*\/format:(?!(?:csv|list|table|htable|hform|xml|value|textvaluelist|rawxml|mof)(?:\s|$)))[^\n]*\b(?:get|list)\b`,
  String.raw`(?:ipconfig|systeminfo|whoami|hostname|findstr|find|sort|more|tasklist|driverquery|gpresult|ver|tree|where|nslookup|ping|tracert|pathping|netstat|arp|route\s+print|query\s+(?:user|session))(?:\.exe)?\b`,
  String.raw`(?:get|select|where|sort|format|measure|test|resolve)-\w+`,
  String.raw`(?:ls|grep|egrep|head|tail|wc|uniq|ps|id|uname|df|du|free|uptime|ss|w|who|last|journalctl|dig|host|traceroute|printenv|lsof|lsblk|ifconfig)\b`,
  String.raw`ip\s+(?:-\w+\s+)*(?:a|addr|address|r|route|link|neigh)(?:\s+show)?\b`, String.raw`crontab\s+-l\b`, String.raw`systemctl\s+(?:status|list-units|list-timers|is-active|is-enabled)\b`,
  // Protection switched on (a host firewall, Defender's monitoring, SELinux, auditing): the attack
  // collections switch the same settings off, and the model, which saw the `off` lines, reads the
  // `on` ones alike. The whole command, with nothing switched off on it.
  String.raw`netsh(?:\.exe)?\s+advfirewall\s+set\s+(?:allprofiles|currentprofile|domainprofile|privateprofile|publicprofile)\s+state\s+on\s*$`,
  String.raw`set-netfirewallprofile\b(?![^\n]*(?:\$false|\bfalse\b|\s0\b))[^\n]*-enabled\s+(?:\$?true|1)\b[^\n]*$`,
  String.raw`set-mppreference(?:\s+-disable\w+\s+(?:\$false|0))+\s*$`, String.raw`(?:update-mpsignature|start-mpscan)\b`,
  String.raw`setenforce\s+(?:1|enforcing)\s*$`, String.raw`ufw\s+(?:--force\s+)?enable\s*$`,
  // MSBuild building a project or solution through one of the standard targets (`/t:Build`,
  // `Rebuild`, `Clean`, `Restore`, `Pack`, `Publish`, `Test`), with only property, verbosity and
  // parallelism switches beside it. The LOLBin use runs a project's inline task by its default
  // target (`msbuild.exe payload.csproj`), often from an `.xml` file, a response file or with a
  // logger DLL, or a project dropped in a user, temp or shared folder: none of those is left alone.
  String.raw`(?:&\s*)?(?:["']?[^"'\n]*[\\/]msbuild(?:\.exe)?["']|["']?(?:[^\s"']*[\\/])?msbuild(?:\.exe)?)\s+["']?(?!\\\\|[^\s"']*(?:%\w+%|\$env:|\\users\\|\\programdata\\|\\temp\\|\\appdata\\|\/tmp\/))[^\s"'@]+\.(?:sln|csproj|vbproj|fsproj|vcxproj|proj|wixproj|sqlproj)["']?(?=[^\n]*\s\/(?:t|target):(?:build|rebuild|clean|restore|pack|publish|test|vstest)\b)(?:\s+\/(?:t|target|p|property|m|maxcpucount|v|verbosity|nologo|restore|bl)(?::[^\s@]*)?)+\s*$`,
  // A settings page or shell dialog opened, the screen locked or the machine put to sleep through
  // rundll32 with Windows' own DLL and export (`shell32.dll,Control_RunDLL desk.cpl`,
  // `user32.dll,LockWorkStation`): the whole command line, nothing loaded from elsewhere.
  String.raw`rundll32(?:\.exe)?\s+(?:shell32(?:\.dll)?,\s*control_rundll\s+["']?(?:access|appwiz|bthprops|desk|firewall|hdwwiz|inetcpl|intl|irprops|joy|main|mmsys|ncpa|powercfg|sysdm|tabletpc|telephon|timedate|wscui)\.cpl(?:,[^\s"']*)?["']?|shell32(?:\.dll)?,\s*options_rundll\s+\d+|user32(?:\.dll)?,\s*lockworkstation|powrprof(?:\.dll)?,\s*setsuspendstate(?:\s+[\d,]+)?|keymgr(?:\.dll)?,\s*krshowkeymgr|sysdm\.cpl,\s*editenvironmentvariables|inetcpl\.cpl,\s*clearmytracksbyprocess\s+\d+|netplwiz(?:\.dll)?,\s*usersrundll|dsquery(?:\.dll)?,\s*openquerywindow)\s*$`,
].map((c) => `(?:${c})`).join('|'), 'i');
const UNJUDGED_START = new RegExp(`^(?:${UNJUDGED_COMMAND.source})`, 'i');
function onlyUnjudgedCommands(text: string): boolean {
  const parts = text.split(/\|\|?|&&|;|\n|(?<!\d)&(?![>\d])/).map((x) => x.trim().replace(/^(?:sudo\s+|cmd(?:\.exe)?\s+\/c\s+|powershell(?:\.exe)?\s+(?:-c(?:ommand)?\s+)?)/i, '')).filter(Boolean);
  // A read that runs something inside it (`find -exec`, a `$(...)` or backtick substitution) is not only a read.
  return parts.length > 0 && parts.every((x) => UNJUDGED_START.test(x.replace(/^["'(]+/, '')) && !/\s-(?:exec|execdir|delete|ok)\b|\$\(|`[^`\s]/i.test(x));
}
/**
 * Perl programs: the model saw almost none (three of its 37,693 training files), so a `.pl`
 * file that the type check reads as text is not in a trained language and a hit on it stays low
 * (Perl examples and modules and Nagios plugins were Suspicious on the model alone in the benign
 * corpus's validation split, Perl's generated Unicode tables in its train split): a perl
 * shebang, or a first line of code that is `package Name;`, `use strict;`, `use warnings;`,
 * `use Some::Module ...;` or a package-qualified variable (`%Unicode::UCD::...`). Read from the
 * content, never the name. PHP has its own type, which is not a trained one.
 */
const PERL = /^(?:\uFEFF)?(?:#![^\n]*\bperl[\d.]*\b|(?:[ \t]*(?:#[^\r\n]*)?\r?\n)*[ \t]*(?:package\s+[A-Za-z_][\w:]*\s*;|use\s+(?:strict|warnings|[A-Za-z_]\w*(?:::\w+)+)\b[^;\n]*;|[$%@][A-Za-z_]\w*(?:::\w+)+))/;
export const perlProgram = (text: string): boolean => PERL.test(text);

/**
 * Debian maintainer scripts made only of debhelper's generated sections (`# Automatically added
 * by dh_python3` ... `# End automatically added section`) around a shebang, `set -e` and `exit 0`:
 * the same few lines in thousands of packages, which the model scored 0.90-0.97 (12 of the 43
 * model-alone hits in the corpus's validation split). Anything outside the sections, or a
 * section left open, and the model reads the file as usual; the rules always read it.
 */
export function onlyDebhelperSections(text: string): boolean {
  let inside = false;
  let sections = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (/^# Automatically added by dh_[\w-]+/.test(line)) {
      if (inside) return false;
      inside = true;
      sections++;
    } else if (line === '# End automatically added section') {
      if (!inside) return false;
      inside = false;
    } else if (!inside && line && !/^(?:#.*|set -e|exit 0)$/.test(line)) {
      return false;
    }
  }
  return sections > 0 && !inside;
}

/** Python read whole for its shape up to this size; a larger module is judged as any other. */
const LIBRARY_READ_MAX = 1024 * 1024;
const MAX_LIBRARY_LINE = 4096;
/** Statements that define rather than do: imports, def/class and their decorators, assignments, docstrings. */
const DEFINES = /^(?:import\s|from\s+[\w.]+\s+import\b|[)\]}]|pass\b|raise\b|[A-Za-z_][\w.]*(?:\[[^\]\n]{0,200}\])?(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?::[^=\n]{1,200})?(?:[-+*|&]|\/\/)?=(?!=))/;
/** Headers of blocks whose bodies run on import and are read with the same rule; `if __name__ == ...` is a script's entry point. */
const IMPORT_TIME_BLOCK = /^(?:if\s+(?!\(?\s*__name__\b)|elif\s|else\s*:|try\s*:|except\b|finally\s*:)/;
const DEFINITION = /^(?:(?:async\s+)?def\s|class\s|@)/;

/**
 * A Python module that only defines things: every statement that runs on import (at the top
 * level, and inside top-level `if`/`try` blocks) is an import, a def or class, an assignment, a
 * docstring, `pass` or `raise`; no call statement, loop, `with` block or `__main__` entry point.
 * That is library code (the bulk of the model's medium hits on the benign corpus), while an
 * attack script does something when run: a reverse shell, a download, a loop, or `main()`
 * behind the `__main__` check. The bodies of functions are not read here (the rules read them).
 */
export function pythonLibraryModule(text: string): boolean {
  let depth = 0;
  let triple: string | null = null;
  let continued = false;
  let skipAbove = -1;
  let statements = 0;
  for (const raw of text.split('\n')) {
    // Minified or generated lines are not a library's shape, and reading them quote by quote would cost quadratic time.
    if (raw.length > MAX_LIBRARY_LINE) return false;
    const line = raw.trimEnd();
    let code = line;
    if (triple) {
      const end = code.indexOf(triple);
      if (end < 0) continue;
      code = code.slice(end + 3);
      triple = null;
    }
    const trimmed = line.trimStart();
    const startsStatement = code === line && depth === 0 && !continued && trimmed !== '' && !trimmed.startsWith('#');
    // Strings and comments out before brackets are counted; an unclosed triple quote opens a block.
    code = code.replace(/("""|''')[\s\S]*?\1/g, '');
    const open = /"""|'''/.exec(code);
    if (open) {
      triple = open[0];
      code = code.slice(0, open.index);
    }
    code = code.replace(/"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, '\'\'').replace(/#.*$/, '');
    for (const ch of code) {
      if (ch === '(' || ch === '[' || ch === '{') depth++;
      else if ((ch === ')' || ch === ']' || ch === '}') && depth > 0) depth--;
    }
    continued = code.endsWith('\\');
    if (!startsStatement) continue;
    const indent = line.length - trimmed.length;
    if (skipAbove >= 0 && indent > skipAbove) continue;
    skipAbove = -1;
    statements++;
    if (DEFINITION.test(trimmed)) {
      skipAbove = indent;
      continue;
    }
    // A string alone is a docstring; `import os; s = socket.socket(); s.connect(..)` is three statements.
    const parts = code.trim().split(';').map((x) => x.trim()).filter(Boolean);
    if (/^[rRuUbBfF]{0,2}["']/.test(trimmed) ? parts.some((x) => x !== "''") : !parts.every((x) => IMPORT_TIME_BLOCK.test(x) || DEFINES.test(x))) return false;
  }
  return statements > 0;
}

/** Containers: their members are scored one by one, so the container itself is not. */
const ARCHIVES: ReadonlySet<FileType> = new Set<FileType>(['zip', '7z', 'rar', 'tar', 'gzip']);

/**
 * Medium levels above ML_MEDIUM_FROM for one language, set by the training script on the benign
 * corpus's validation split (`training.languageMediumFrom`): the validation sources it calibrates
 * on hold few real scripts of some languages (shell: command lines, not packages' scripts), so
 * there the level is raised until at most a set share of that language's real files reach it.
 */
export const readLanguageLevels = (training: Record<string, unknown>): ReadonlyMap<string, number> =>
  new Map(Object.entries((training.languageMediumFrom ?? {}) as Record<string, unknown>)
    .filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > ML_MEDIUM_FROM && e[1] < 1));

function loadScriptModel(file = SCRIPT_MODEL_PATH): (LogisticModel & { shortMediumFrom: number; languageMediumFrom: ReadonlyMap<string, number> }) | Error {
  try {
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as PromptInjectionModel;
    const short = Number(json.training.shortMediumFrom);
    // A model without a short-text level never speaks on one-liners.
    return Object.assign(new LogisticModel(json), { shortMediumFrom: Number.isFinite(short) ? short : Infinity, languageMediumFrom: readLanguageLevels(json.training) });
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

let SCRIPT_MODEL = loadScriptModel();

/**
 * Scores with another script model file from now on, in this process only. For the development
 * bench (`npm run bench -- dev-scripts`), which runs the whole pipeline with the model that
 * `train-script-ml.ts --inner-out` fits without the validation sources; the service never calls it.
 */
export function useScriptModelFile(file: string): void {
  const loaded = loadScriptModel(file);
  if (loaded instanceof Error) throw loaded;
  SCRIPT_MODEL = loaded;
}

/**
 * The text the model reads, as a window accessor: the content itself when it is text (decoded
 * window by window, so a large file is never decoded whole), else its printable strings.
 */
function readableText(subject: ScanSubject): { length: number; window: (i: number) => string; fromStrings: boolean } {
  const c = subject.content;
  if (c[0] === 0xff && c[1] === 0xfe) {
    const t = c.toString('utf16le');
    return { length: t.length, window: (i) => t.slice(i * SCRIPT_WINDOW, (i + 1) * SCRIPT_WINDOW), fromStrings: false };
  }
  if (!c.subarray(0, 4096).includes(0) && (TEXT_TYPES.has(subject.fileType) || subject.fileType === 'unknown')) {
    return { length: c.length, window: (i) => c.subarray(i * SCRIPT_WINDOW, (i + 1) * SCRIPT_WINDOW).toString('utf8'), fromStrings: false };
  }
  // Binary formats: the printable strings of each byte window.
  const strings = (i: number): string => extractStrings(c.subarray(i * SCRIPT_WINDOW, (i + 1) * SCRIPT_WINDOW), { minLength: 6 }).join('\n');
  return { length: c.length, window: strings, fromStrings: true };
}

/**
 * What the script model reads of one window, in training and inference alike: comments
 * (help blocks, licence headers) removed, since they describe code rather than do anything.
 */
export const scriptModelText = (window: string): string => classifierText(stripComments(window));

/**
 * Windows scored per file at most. Beyond that the windows are spread evenly from the first to
 * the last, so the whole file is represented at a bounded cost (the rule engines read all of
 * it); the report says how many of how many were scored.
 */
export const MAX_WINDOWS = 4;

/** Worst window probability and the words seen; checks the budget between windows. */
function scoreWindows(model: LogisticModel, src: { length: number; window: (i: number) => string }, signal: AbortSignal): { p: number; words: number; judgeable: boolean; scored: number; total: number } {
  const total = Math.max(1, Math.ceil(src.length / SCRIPT_WINDOW));
  const picks = total <= MAX_WINDOWS ? [...Array(total).keys()] : [...Array(MAX_WINDOWS).keys()].map((k) => Math.round((k * (total - 1)) / (MAX_WINDOWS - 1)));
  let best = 0;
  let words = 0;
  for (const w of picks) {
    if (signal.aborted) throw new EngineTimeoutError('ml: time budget exhausted');
    const text = src.window(w);
    if (words < ML_MIN_WORDS) words += wordCount(text);
    const p = model.score(scriptModelText(text));
    if (p > best) best = p;
  }
  // Under ML_MIN_WORDS words the text is one short window.
  return { p: best, words, judgeable: words >= ML_MIN_WORDS || judgeableShortText(src.window(0)), scored: picks.length, total };
}

function scanText(subject: ScanSubject, ctx: EngineContext): EngineOutput {
  if (SCRIPT_MODEL instanceof Error) return { findings: [], note: `script ML model unavailable at ${SCRIPT_MODEL_PATH}: ${SCRIPT_MODEL.message}` };
  if (ARCHIVES.has(subject.fileType)) return { findings: [], note: 'archive: the script model scores each extracted member' };
  const src = readableText(subject);
  const { fromStrings } = src;
  if (!fromStrings && src.length <= SCRIPT_WINDOW && onlyDebhelperSections(src.window(0))) {
    return { findings: [], note: "a maintainer script made only of debhelper's generated sections: not judged by the script model" };
  }
  const { p, words, judgeable, scored, total } = scoreWindows(SCRIPT_MODEL, src, ctx.signal);
  const t = SCRIPT_MODEL.threshold;
  const report = { ml: { model: 'script-text logistic regression (calibrated)', probability: p, threshold: t, input: fromStrings ? 'printable strings' : 'text', windowsScored: scored, windows: total } };
  // Outside the languages it was trained on (JavaScript, HTML, a binary's strings) and on
  // payloads (prompts are judged by the payload engines) it speaks only when sure, and low.
  const inTrainedLanguage = (): boolean => !fromStrings && subject.scanType === 'file' && TRAINED_TYPES.has(subject.fileType) && !perlProgram(src.window(0))
    && !(subject.fileType === 'python' && subject.content.length <= LIBRARY_READ_MAX && pythonLibraryModule(subject.content.toString('utf8')));
  // The language checks read the whole file, so only a score that could make a finding asks them.
  const trained = p >= Math.min(t, ML_MEDIUM_FROM, SCRIPT_MODEL.shortMediumFrom) && inTrainedLanguage();
  const short = words < ML_MIN_WORDS;
  const languageFrom = SCRIPT_MODEL.languageMediumFrom.get(subject.fileType) ?? 0;
  if (short ? !trained || !judgeable || p < Math.max(SCRIPT_MODEL.shortMediumFrom, languageFrom) : p < (trained ? t : ML_MEDIUM_FROM)) return { findings: [], report };
  // Medium only when sure, on a file in a trained language (from its own level where it has one).
  const severity = trained && p >= Math.max(ML_MEDIUM_FROM, languageFrom) ? 'medium' : 'low';
  return {
    findings: [makeFinding(ENGINE, 'ml.text.malicious', 'ML.Script.Suspicious', severity, p,
      `The script classifier scores this ${subject.fileType} content ${round2(p)} (calibrated probability; threshold ${t}).`, 'ml')],
    report,
  };
}

export const engine: Engine = {
  name: ENGINE,
  async scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput> {
    if (subject.fileType !== 'pe' && subject.fileType !== 'elf') return scanText(subject, ctx);
    if (!MODEL) return { findings: [], note: `static ML model missing or incompatible at ${MODEL_PATH}` };
    const feats = extractMlFeatures(subject.file);
    if (!feats) return { findings: [], note: 'the static ML model covers PE and ELF only' };
    const p = predict(MODEL, feats.vector);
    const report = { ml: { model: 'static-ml logistic regression', probability: p, threshold: MODEL.threshold, heldOutPrecision: MODEL.heldOut.precision } };
    if (p < MODEL.threshold) return { findings: [], report };
    // Medium at most: the malicious side of the training data is synthetic (docs/ml-model.md).
    const confidence = Math.min(p, MODEL.heldOut.precision, CONFIDENCE_CAP);
    return {
      findings: [makeFinding(ENGINE, `ml.static.${feats.format}.malicious`, 'ML.Static.Suspicious', 'medium', confidence,
        `The static-feature classifier scores this ${feats.format.toUpperCase()} file ${round2(p)} (threshold ${MODEL.threshold}); held-out precision ${MODEL.heldOut.precision}.`, 'ml')],
      report,
    };
  },
};

/**
 * Static analysis of scripts (PowerShell, JavaScript, VBScript, batch, shell, Python, HTML).
 *
 * Rules are data: each names the traits that must all be present. Every pattern is written to
 * run in linear time on V8's backtracking engine: no nested quantifiers, and every gap between
 * tokens is a bounded `[^\n]{0,N}`. Base64 payloads given to -EncodedCommand or
 * FromBase64String are decoded and the decoded text is checked by the same rules once.
 */
import type { Engine, EngineOutput, FileType, Finding, ScanSubject, Severity } from '../types';
import { makeFinding, shannonEntropy } from '../static/common';
import { analyzeTechniques, DEV_TCP_SHELL, type TechniqueHit, VENDOR_REASON, vendorDownload } from './attack-techniques';
import { MAX_DEOBFUSCATE, withoutWordLists } from './script-normalize';

const ENGINE = 'static_script';
const MAX_TEXT = 16 * 1024 * 1024;
const SCRIPT_TYPES: ReadonlySet<FileType> = new Set<FileType>(['powershell', 'javascript', 'vbscript', 'batch', 'shell', 'python', 'php', 'html', 'text', 'unknown']);

interface ScriptRule {
  id: string;
  name: string;
  severity: Severity;
  confidence: number;
  category: string;
  description: string;
  /** All must match somewhere in the text. */
  all: RegExp[];
}

const R = (
  id: string, name: string, severity: Severity, confidence: number, category: string, description: string, ...all: RegExp[]
): ScriptRule => ({ id, name, severity, confidence, category, description, all });

export const SCRIPT_RULES: readonly ScriptRule[] = [
  // Download and execute.
  R('script.download_execute.powershell', 'Downloader.PowerShell.IEX', 'high', 0.9, 'download_execute', 'PowerShell downloads code and runs it with Invoke-Expression.',
    /(?:\bIEX\b|Invoke-Expression)[^\n]{0,400}(?:DownloadString|DownloadData|Net\.WebClient|Invoke-WebRequest|Invoke-RestMethod|\biwr\b|\birm\b)|(?:DownloadString|DownloadData|Invoke-WebRequest|Invoke-RestMethod|\biwr\b|\birm\b)[^\n]{0,400}\|\s{0,8}(?:IEX\b|Invoke-Expression)/i),
  // Low: installers are published this way; the shady-source variant is an ATT&CK rule (high).
  R('script.download_execute.pipe_shell', 'Downloader.Shell.PipeToShell', 'low', 0.6, 'download_execute', 'A remote script is fetched with curl/wget and piped straight into a shell.',
    /\b(?:curl|wget)\b[^\n|;]{0,300}\|\s{0,8}(?:sudo\s{1,8}(?:-\S{1,10}\s{1,8}){0,3})?(?:ba|da|z|k|fi)?sh\b/i),
  R('script.download_execute.certutil', 'Downloader.Certutil', 'high', 0.9, 'download_execute', 'certutil -urlcache is used to download a file (a LOLBin download).',
    /certutil(?:\.exe)?[^\n]{0,120}-urlcache/i),
  R('script.download_execute.mshta', 'Downloader.Mshta', 'high', 0.85, 'download_execute', 'mshta runs a remote HTA/script.', /\bmshta(?:\.exe)?\s{1,8}["']?(?:https?:|vbscript:|javascript:)/i),
  R('script.download_execute.regsvr32', 'Downloader.Regsvr32', 'high', 0.9, 'download_execute', 'regsvr32 loads a remote scriptlet (Squiblydoo).', /regsvr32[^\n]{0,100}\/i:\s{0,4}https?:[^\n]{0,200}scrobj/i),
  R('script.download_execute.bitsadmin', 'Downloader.Bitsadmin', 'medium', 0.75, 'download_execute', 'bitsadmin /transfer downloads a file.', /bitsadmin(?:\.exe)?[^\n]{0,60}\/transfer/i),
  R('script.download_execute.com', 'Downloader.WSH', 'high', 0.85, 'download_execute', 'The script downloads with an HTTP COM object, writes it with ADODB.Stream and runs it.',
    /MSXML2\.(?:Server)?XMLHTTP|WinHttp\.WinHttpRequest|Microsoft\.XMLHTTP/i, /ADODB\.Stream/i, /\.(?:Run|Exec|ShellExecute)\s*\(?/i),
  R('script.download_execute.python', 'Downloader.Python.Exec', 'high', 0.85, 'download_execute', 'Python fetches code over HTTP and runs it with exec/eval.',
    /\b(?:exec|eval)\s*\(\s*(?:urllib\d?\.request\.urlopen|urllib\d?\.urlopen|requests\.get|urlopen)\s*\(/),
  // Encoded commands.
  R('script.encoded_command', 'PowerShell.EncodedCommand', 'high', 0.85, 'obfuscation', 'PowerShell is started with -EncodedCommand and a base64 payload.',
    /\bpowershell(?:\.exe)?[^\n]{0,200}\s-(?:e|ec|en|enc|enco|encod|encode|encoded|encodedcommand)\s{1,8}["']?[A-Za-z0-9+/]{20,}/i),
  R('script.frombase64.exec', 'PowerShell.Base64Exec', 'high', 0.8, 'obfuscation', 'Base64-decoded content is executed or loaded as an assembly.',
    /FromBase64String/i, /(?:\bIEX\b|Invoke-Expression|Reflection\.Assembly\]::Load|\[Reflection\.Assembly\]::Load|Assembly\]::Load\()/i),
  R('script.frombase64', 'PowerShell.FromBase64String', 'low', 0.6, 'obfuscation', 'Content is decoded from base64 at run time.', /FromBase64String\s*\(/i),
  R('script.js.eval_decode', 'JS.EvalDecoded', 'medium', 0.75, 'obfuscation', 'JavaScript evaluates decoded or char-built code.',
    /\beval\s*\(\s*(?:atob|unescape|decodeURIComponent|String\.fromCharCode|window\.atob|Buffer\.from)\s*\(/),
  // Hidden markup is a literal written in escapes; a template that encodes a variable at run time
  // (Smarty's mailto plugin, a captcha's figlet output, both hiding an address from harvesters) is not.
  R('script.html.document_write_unescape', 'HTML.WriteUnescape', 'medium', 0.7, 'obfuscation', 'The page writes unescaped hidden markup into itself.',
    /document\.write\s*\(\s*(?:unescape\s*\(\s*\\?["']%[0-9a-f]{2}|atob\s*\(\s*\\?["'][a-z0-9+/]{8})/i),
  // Persistence.
  R('script.persistence.run_key', 'Persistence.RunKey', 'medium', 0.8, 'persistence', 'The script writes a Windows Run/RunOnce autostart key.',
    /\\(?:Software|SOFTWARE)\\(?:WOW6432Node\\)?Microsoft\\Windows\\CurrentVersion\\Run(?:Once)?\b/i, /(?:\breg(?:\.exe)?\s{1,8}add\b|New-ItemProperty|Set-ItemProperty|RegWrite|SetValue|\bwinreg\b|REG_SZ)/i),
  R('script.persistence.schtasks', 'Persistence.ScheduledTask', 'medium', 0.75, 'persistence', 'The script creates a scheduled task.',
    /\bschtasks(?:\.exe)?\s{1,8}\/create\b|Register-ScheduledTask|New-ScheduledTaskAction/i),
  R('script.persistence.cron', 'Persistence.Cron', 'medium', 0.75, 'persistence', 'The script installs a cron job.',
    /\|\s{0,8}crontab\s{1,8}-(?:\s|$)|crontab\s{1,8}-l[^\n]{0,200}(?:echo|printf)|>>?\s{0,8}\/etc\/cron(?:tab|\.d\/|\.hourly|\.daily)|\/var\/spool\/cron\/(?:crontabs\/)?\w/im),
  R('script.persistence.systemd', 'Persistence.SystemdUnit', 'medium', 0.7, 'persistence', 'The script writes a systemd unit file.',
    /(?:>|\btee\s{1,8}(?:-a\s{1,8})?)\s{0,8}["']?(?:\/etc\/systemd\/system|\/lib\/systemd\/system|~\/\.config\/systemd\/user|\$HOME\/\.config\/systemd\/user)\/[^\s"']{1,100}\.(?:service|timer)/i),
  R('script.persistence.shell_profile', 'Persistence.ShellProfile', 'medium', 0.75, 'persistence', 'The script appends to a shell start-up file (.bashrc/.profile/.zshrc).',
    />>\s{0,8}["']?(?:~|\$HOME|\$\{HOME\}|\/root|\/home\/[^/\s]{1,64})\/\.(?:bashrc|bash_profile|bash_login|profile|zshrc)\b/i),
  R('script.persistence.startup_folder', 'Persistence.StartupFolder', 'medium', 0.75, 'persistence', 'The script drops a file into the Windows Startup folder.',
    /\\Start Menu\\Programs\\Startup\b|shell:startup|\[Environment\]::GetFolderPath\(\s*['"]Startup['"]/i),
  R('script.persistence.wmi', 'Persistence.WMIEvent', 'high', 0.8, 'persistence', 'The script registers a WMI event subscription (fileless persistence).',
    /__EventFilter/i, /CommandLineEventConsumer|ActiveScriptEventConsumer/i),
  R('script.persistence.ssh_key', 'Persistence.AuthorizedKeys', 'medium', 0.75, 'persistence', 'The script appends an SSH key to authorized_keys.', />>\s{0,8}[^\n;|]{0,100}authorized_keys\b/i),
  R('script.persistence.ld_preload', 'Persistence.LdPreload', 'high', 0.8, 'persistence', 'The script writes /etc/ld.so.preload (library injection into every process).', /(?:>|\btee\b[^\n]{0,20})\s{0,8}\/etc\/ld\.so\.preload/i),
  // Reverse shells.
  R('script.reverse_shell.dev_tcp', 'ReverseShell.DevTcp', 'high', 0.9, 'reverse_shell', 'An interactive shell is connected to a remote host through /dev/tcp.',
    /\/dev\/(?:tcp|udp)\/[^\s/]{1,255}\/\d{1,5}/, new RegExp(DEV_TCP_SHELL, 'i')),
  R('script.reverse_shell.netcat', 'ReverseShell.Netcat', 'high', 0.9, 'reverse_shell', 'netcat hands a shell to a remote host.',
    /\b(?:nc|ncat|netcat)(?:\.exe)?\b[^\n|;]{0,100}\s-[a-z]{0,4}[ec]\s{1,8}["']?(?:\/bin\/(?:ba)?sh|cmd(?:\.exe)?|powershell)|mkfifo[^\n]{0,200}\b(?:nc|ncat|netcat)\b[^\n]{0,100}\d{2,5}/i),
  R('script.reverse_shell.python', 'ReverseShell.Python', 'high', 0.85, 'reverse_shell', 'Python connects a socket and duplicates it onto a shell.',
    /socket\.socket\s*\(/, /\bos\.dup2\s*\(|\.dup2\s*\(/, /\bpty\.spawn\s*\(|subprocess\.(?:call|Popen|run)\s*\(\s*\[?\s*["']\/bin\/(?:ba)?sh|["']\/bin\/(?:ba)?sh["']/),
  R('script.reverse_shell.powershell', 'ReverseShell.PowerShell', 'high', 0.85, 'reverse_shell', 'PowerShell TCP client feeds received text to Invoke-Expression.',
    /Net\.Sockets\.TCPClient/i, /\.GetStream\s*\(\s*\)/i, /(?:\bIEX\b|Invoke-Expression|\bcmd\.exe\b)/i),
  R('script.reverse_shell.socat', 'ReverseShell.Socat', 'high', 0.85, 'reverse_shell', 'socat binds a shell to a network connection.', /\bsocat\b[^\n]{0,200}exec:[^\n]{0,40}(?:\/bin\/(?:ba)?sh|bash|cmd)/i),
  R('script.reverse_shell.perl', 'ReverseShell.Perl', 'high', 0.8, 'reverse_shell', 'A Perl one-liner connects a socket to a shell.', /perl\s{1,8}-e\s{0,4}['"]\s{0,4}use\s{1,4}Socket[^\n]{0,400}exec\s*\(?\s*["']\/bin\/(?:ba)?sh/i),
  // Defense evasion / impact / credential access.
  R('script.evasion.amsi_bypass', 'Evasion.AmsiBypass', 'high', 0.9, 'evasion', 'The script tampers with AMSI to blind anti-malware scanning.', /AmsiUtils|amsiInitFailed|AmsiScanBuffer/i),
  R('script.evasion.defender_tamper', 'Evasion.DefenderTamper', 'high', 0.85, 'evasion', 'The script disables Microsoft Defender or adds exclusions.',
    /Set-MpPreference\s{1,8}-Disable\w{1,40}\s{1,8}(?:\$true|1)|Add-MpPreference\s{1,8}-Exclusion|DisableAntiSpyware/i),
  R('script.evasion.hidden_bypass', 'PowerShell.HiddenBypass', 'medium', 0.7, 'evasion', 'PowerShell is launched hidden with the execution policy bypassed.',
    /\s-(?:w|wi|win|window|windowstyle)\s{1,8}h(?:idden|id|i)?\b|\s-w\s{1,8}1\b/i, /\s-(?:ep|ex|exec|executionpolicy)\s{1,8}(?:bypass|unrestricted)\b/i),
  R('script.impact.shadow_delete', 'Ransom.ShadowCopyDelete', 'high', 0.85, 'impact', 'The script deletes shadow copies or disables recovery, as ransomware does.',
    /vssadmin(?:\.exe)?\s{1,8}delete\s{1,8}shadows|wmic(?:\.exe)?\s{1,8}shadowcopy\s{1,8}delete|wbadmin\s{1,8}delete\s{1,8}catalog|bcdedit[^\n]{0,60}recoveryenabled\s{1,8}no/i),
  R('script.credential.mimikatz', 'HackTool.Mimikatz', 'high', 0.9, 'credential_access', 'Mimikatz credential-dumping commands are present.', /Invoke-Mimikatz|sekurlsa::|lsadump::|kerberos::golden/i),
  R('script.evasion.history_wipe', 'Evasion.HistoryWipe', 'low', 0.6, 'evasion', 'Shell history is disabled or wiped.', /\bunset\s{1,8}HISTFILE\b|HISTFILE=\/dev\/null|\bhistory\s{1,8}-c\b/),
  // Starting a process is what WSH utility scripts are for: named, not an attack on its own.
  R('script.wsh.shell_run', 'WSH.ShellRun', 'low', 0.6, 'execution', 'The script starts processes through WScript.Shell (a capability admin scripts use too).', /WScript\.Shell/i, /\.(?:Run|Exec)\s*[( ]/i),
  // A hidden iframe that loads a page from elsewhere: libraries make empty hidden frames of their
  // own (jQuery 1.x measures default styles in one, upload widgets post into one), with no source
  // or a `javascript:` one.
  R('script.html.hidden_iframe', 'HTML.HiddenIframe', 'medium', 0.6, 'injection', 'The page contains a zero-size or hidden iframe that loads a page from elsewhere.',
    /<iframe\b(?=[^>]{0,400}\bsrc\s*=\s*\\?["']?\s*(?:https?:|\/\/|["']\s*\+))[^>]{0,400}(?:\b(?:width|height)\s*=\s*\\?["']?0["'\\\s>]|visibility\s*:\s*hidden|display\s*:\s*none)/i),
];

export interface ScriptStats {
  length: number;
  entropy: number;
  longestBase64: number;
  charCodeCalls: number;
  concatOps: number;
  psTicks: number;
}

/**
 * Character-code calls that spell text (`[char]73+[char]69`, `Chr(72) & Chr(105)`). Two shapes
 * are data instead: a call that keys an array or hash (`chr(65) => 600`, font metrics), and a
 * literal code outside printable ASCII (`chr(195)`), a byte nobody could type that encoders and
 * Latin-1 tables write this way; neither hides a keyword. A computed code (`Chr(72 Xor k)`) counts.
 */
function charCodeCalls(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/String\.fromCharCode|\[char\]\s{0,4}(0x[0-9a-f]{1,6}|\d{1,7})|\bChrW?\$?\s{0,4}\(\s{0,4}(0x[0-9a-f]{1,6}|\d{1,7})(\s{0,4}\)\s{0,4}(=>)?)?/gi)) {
    const literal = m[1] ?? (m[3] !== undefined ? m[2] : undefined);
    if (m[4] !== undefined) continue;
    if (literal !== undefined) {
      const code = Number(literal);
      if (code < 32 || code > 126) continue;
    }
    n++;
  }
  return n;
}

function stats(text: string): ScriptStats {
  let longest = 0;
  for (const m of text.matchAll(/[A-Za-z0-9+/]{200,}={0,2}/g)) longest = Math.max(longest, m[0].length);
  const sample = Buffer.from(text.slice(0, 1024 * 1024), 'latin1');
  return {
    length: text.length,
    entropy: shannonEntropy(sample),
    longestBase64: longest,
    charCodeCalls: charCodeCalls(text),
    concatOps: (text.match(/["']\s{0,4}[+&]\s{0,4}["']/g) ?? []).length,
    // A backtick before an escape letter (`n, `t, `r, ...) is a control character in a string, not a hidden keyword.
    psTicks: (text.match(/[A-Za-z]`[A-Zcdg-mo-qswxyz]/g) ?? []).length,
  };
}

/** Base64 payloads passed to -EncodedCommand (UTF-16LE) or FromBase64String, decoded. */
function decodedPayloads(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\s-(?:e|ec|en|enc|enco|encod|encode|encoded|encodedcommand)\s{1,8}["']?([A-Za-z0-9+/]{20,}={0,2})/gi)) {
    const raw = Buffer.from(m[1], 'base64');
    const utf16 = raw.toString('utf16le');
    out.push(/^[\x09\x0a\x0d\x20-\x7e]*$/.test(utf16.slice(0, 200)) ? utf16 : raw.toString('latin1'));
    if (out.length >= 8) break;
  }
  for (const m of text.matchAll(/FromBase64String\s*\(\s*["']([A-Za-z0-9+/]{16,}={0,2})["']/gi)) {
    const raw = Buffer.from(m[1], 'base64');
    const utf16 = raw.toString('utf16le');
    out.push(/^[\x09\x0a\x0d\x20-\x7e]*$/.test(utf16.slice(0, 200)) && raw.length > 1 && raw[1] === 0 ? utf16 : raw.toString('latin1'));
    if (out.length >= 16) break;
  }
  return out;
}

function applyRules(text: string, suffix: string): Finding[] {
  const f: Finding[] = [];
  for (const rule of SCRIPT_RULES) {
    let excerpt = '';
    let ok = true;
    for (const re of rule.all) {
      const m = re.exec(text);
      if (!m) {
        ok = false;
        break;
      }
      if (excerpt === '') excerpt = m[0];
    }
    if (ok) f.push(makeFinding(ENGINE, rule.id, rule.name, rule.severity, rule.confidence, rule.description + suffix, rule.category, excerpt));
  }
  return f;
}

/** Persistence that admin scripts set up too: low alone, high next to an offensive technique. */
const DUAL_USE = new Set(['script.persistence.ssh_key', 'script.persistence.run_key', 'script.persistence.schtasks', 'script.persistence.cron', 'script.persistence.systemd', 'script.persistence.shell_profile', 'script.persistence.startup_folder']);

const MAX_PLAIN_TEXT = 256 * 1024;
const PLAIN_TEXT: ReadonlySet<FileType> = new Set<FileType>(['text', 'unknown']);
const STATISTICAL = new Set(['script.obfuscation.base64_blob', 'script.obfuscation.charcode', 'script.obfuscation.concat', 'script.obfuscation.backtick', 'script.obfuscation.high_entropy', 'script.obfuscated_malicious']);
/** Languages in which a backtick is not PowerShell's escape character even when PowerShell is named. */
const NO_TICK_ESCAPES: ReadonlySet<FileType> = new Set<FileType>(['javascript', 'php']);
/** A file of another language that hands a command to PowerShell (a batch file, a VBScript or Python launcher). */
const NAMES_POWERSHELL = /\b(?:powershell|pwsh)\b/i;

const SEVERITY_ORDER: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

function techniqueFinding(h: TechniqueHit): Finding {
  const decoded = h.via === 'plain' ? '' : ` Seen after undoing obfuscation (${h.via}).`;
  const softened = h.softened ? ` ${h.softened}` : '';
  return makeFinding(ENGINE, `script.technique.${h.rule.id}`, `${h.rule.technique} ${h.rule.name}`, h.severity, h.severity === 'low' ? 0.6 : h.softened ? 0.7 : 0.85,
    `MITRE ATT&CK ${h.rule.technique} (${h.rule.tactic.replace(/_/g, ' ')}): ${h.rule.name}.${decoded}${softened}`, h.rule.tactic, h.excerpt);
}

/** All findings for one script text. Exported for tests and reuse on decoded payloads. */
export function analyzeScriptText(text: string): { findings: Finding[]; stats: ScriptStats } {
  const st = stats(text);
  const findings = applyRules(withoutWordLists(text), '');
  // The older cradle rule reads the text as written: softened like the technique rule.
  const vendor = findings.find((f) => f.id === 'script.download_execute.powershell');
  if (vendor && vendorDownload(text.toLowerCase())) {
    Object.assign(vendor, { severity: 'medium', confidence: 0.7, description: `${vendor.description} ${VENDOR_REASON}` });
  }
  const techniques = analyzeTechniques(text);
  findings.push(...techniques.map(techniqueFinding));
  const offensive = findings.some((f) => SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER.high && f.category !== 'persistence' && f.category !== 'obfuscation');
  for (const f of findings) if (DUAL_USE.has(f.id)) f.severity = offensive ? 'high' : 'low';
  const seen = new Set(findings.map((x) => x.id));
  for (const decoded of decodedPayloads(text)) {
    for (const d of applyRules(decoded, ' (found inside a base64-decoded payload)')) {
      if (!seen.has(d.id)) {
        seen.add(d.id);
        findings.push(d);
      }
    }
    if (decoded.startsWith('MZ') && !seen.has('script.embedded_pe')) {
      seen.add('script.embedded_pe');
      findings.push(makeFinding(ENGINE, 'script.embedded_pe', 'Dropper.EmbeddedPE', 'high', 0.85, 'A base64 payload decodes to a Windows executable.', 'dropper', 'MZ'));
    }
  }
  // A long base64 blob that decodes to a PE is a dropper; otherwise just noteworthy.
  if (st.longestBase64 >= 400) {
    const m = /[A-Za-z0-9+/]{400,}={0,2}/.exec(text);
    const head = m ? Buffer.from(m[0].slice(0, 64), 'base64') : Buffer.alloc(0);
    if (head[0] === 0x4d && head[1] === 0x5a && !seen.has('script.embedded_pe')) {
      findings.push(makeFinding(ENGINE, 'script.embedded_pe', 'Dropper.EmbeddedPE', 'high', 0.85, 'A base64 blob decodes to a Windows executable.', 'dropper', m ? m[0].slice(0, 80) : ''));
    } else if (st.longestBase64 >= 2000) {
      findings.push(makeFinding(ENGINE, 'script.obfuscation.base64_blob', 'Obfuscation.Base64Blob', 'low', 0.5, `A ${st.longestBase64}-character base64 blob is embedded.`, 'obfuscation', m ? m[0].slice(0, 80) : ''));
    }
  }
  // Libraries build a few characters from codes (parsers, encoders); obfuscation builds whole
  // strings: many calls, densely.
  if (st.charCodeCalls >= 20 && st.charCodeCalls / Math.max(1, st.length / 1024) >= 2) {
    findings.push(makeFinding(ENGINE, 'script.obfuscation.charcode', 'Obfuscation.CharCode', 'medium', 0.7, `Strings are built from ${st.charCodeCalls} character-code calls (fromCharCode/[char]/Chr).`, 'obfuscation'));
  }
  const perKb = st.concatOps / Math.max(1, st.length / 1024);
  if (st.concatOps >= 40 && perKb >= 8) {
    findings.push(makeFinding(ENGINE, 'script.obfuscation.concat', 'Obfuscation.StringConcat', 'low', 0.5, `Dense string concatenation (${st.concatOps} joins, ${perKb.toFixed(1)}/KB) used to split keywords.`, 'obfuscation'));
  }
  if (st.psTicks >= 10) {
    findings.push(makeFinding(ENGINE, 'script.obfuscation.backtick', 'Obfuscation.PowerShellTicks', 'medium', 0.6, `PowerShell backtick escapes inside identifiers (${st.psTicks}) hide keywords.`, 'obfuscation'));
  }
  const nonSpace = text.replace(/\s/g, '').length;
  if (nonSpace >= 2048 && st.entropy >= 5.8 && st.longestBase64 < 2000) {
    findings.push(makeFinding(ENGINE, 'script.obfuscation.high_entropy', 'Obfuscation.HighEntropy', 'low', 0.4, `Script text entropy is ${st.entropy.toFixed(2)} bits/char, typical of packed or encrypted code.`, 'obfuscation'));
  }
  const obf = findings.filter((x) => x.category === 'obfuscation').length;
  const bad = findings.filter((x) => x.severity === 'high' && x.category !== 'obfuscation').length;
  if (obf >= 2 && bad >= 1) {
    findings.push(makeFinding(ENGINE, 'script.obfuscated_malicious', 'Obfuscated.MaliciousScript', 'high', 0.85, 'Obfuscation combined with malicious behaviour.', 'malware'));
  }
  return { findings, stats: st };
}

export const engine: Engine = {
  name: ENGINE,
  async scan(subject: ScanSubject): Promise<EngineOutput> {
    if (!SCRIPT_TYPES.has(subject.fileType)) return { findings: [], note: `not a script (${subject.fileType})` };
    const c = subject.content;
    if (subject.fileType === 'unknown' && c.subarray(0, 4096).some((b) => b === 0)) return { findings: [], note: 'binary content' };
    // Plain text is read as a script only up to MAX_PLAIN_TEXT: one-liners and pasted snippets
    // are small, while multi-megabyte text is logs or data that would cost seconds per file.
    if (PLAIN_TEXT.has(subject.fileType) && c.length > MAX_PLAIN_TEXT) return { findings: [], note: `plain text over ${MAX_PLAIN_TEXT} bytes is not read as a script` };
    const text = c.subarray(0, MAX_TEXT).toString(c[0] === 0xff && c[1] === 0xfe ? 'utf16le' : 'utf8');
    const all = analyzeScriptText(text);
    const st = all.stats;
    // Backticks, quotes and long tokens are ordinary in prose, Markdown and JSON: in plain text
    // only what the rules and techniques recognise counts, not the obfuscation statistics.
    // PowerShell's tick escapes mean something only in PowerShell code: in Python (docstrings,
    // reStructuredText) a backtick quotes code, in shell and Perl it runs a command, in JavaScript it
    // opens a template literal, in PHP it is the shell operator (which the web-shell technique reads).
    // Outside PowerShell the statistic counts only in a file that names PowerShell, never in JavaScript or PHP.
    const ticksArePowerShell = subject.fileType === 'powershell' || (!NO_TICK_ESCAPES.has(subject.fileType) && NAMES_POWERSHELL.test(text));
    const findings = PLAIN_TEXT.has(subject.fileType) ? all.findings.filter((f) => !STATISTICAL.has(f.id))
      : ticksArePowerShell ? all.findings : all.findings.filter((f) => f.id !== 'script.obfuscation.backtick');
    const out: EngineOutput = { findings, report: { script: st } };
    if (c.length > MAX_TEXT) {
      // Unread is never clean: say so in a finding, not only in a note.
      out.findings.push(makeFinding(ENGINE, 'script.not_fully_analysed', 'Script.NotFullyAnalysed', 'low', 0.5,
        `Only the first ${MAX_TEXT} of ${c.length} bytes were analysed as script text.`, 'coverage'));
    } else if (text.length > MAX_DEOBFUSCATE) {
      out.note = `longer than ${MAX_DEOBFUSCATE} characters: matched as written and in its base64 payloads, without the deobfuscation passes`;
    }
    return out;
  },
};

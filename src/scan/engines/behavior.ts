/**
 * Capability inference in the style of Mandiant capa: a table of rules, each naming a
 * capability, its namespace and ATT&CK technique, and the features that must be present
 * (imported APIs, strings, bounded regexes over strings). Imports come from the same PE/ELF
 * parsers the static engines use. Nothing is executed: this is static inference only, and a
 * capability present in code is not proof that it is ever used.
 */
import type { Engine, EngineOutput, Finding, ScanSubject, Severity } from '../types';
import { makeFinding } from '../static/common';
import { STRING_READERS } from '../static/strings';
import type { FileAnalysis } from '../file-analysis';

const ENGINE = 'behavior';
const MAX_STRING_BYTES = STRING_READERS.behavior.maxBytes;

/** An imported API (A/W suffix optional), also matched as an exact string for run-time resolution. */
interface ApiFeature { api: string }
/** Case-insensitive substring of any extracted string. */
interface StringFeature { string: string }
/** Regex over the newline-joined strings; must be linear-time (bounded gaps only). */
interface RegexFeature { regex: RegExp }
/** A whole extracted string that is a public IPv4 address (optionally scheme:// and :port). */
interface PublicIpFeature { publicIp: true }
interface AnyOf { any: Feature[]; min?: number }
type Feature = ApiFeature | StringFeature | RegexFeature | PublicIpFeature | AnyOf;

export interface CapabilityRule {
  id: string;
  name: string;
  namespace: string;
  attack: string;
  severity: Severity;
  confidence: number;
  all: Feature[];
}

const api = (n: string): ApiFeature => ({ api: n });
const str = (s: string): StringFeature => ({ string: s });
const rx = (r: RegExp): RegexFeature => ({ regex: r });
const any = (min: number, ...f: Feature[]): AnyOf => ({ any: f, min });

const PUBLIC_IP: PublicIpFeature = { publicIp: true };
const IP_STRING = /^(?:[a-z]{3,8}:\/\/)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?::\d{2,5})?(?:\/[!-~]{0,200})?$/;

/**
 * Routable unicast only: drops 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24,
 * 192.168/16, 198.18/15, multicast and above. Quads starting 1. or 2. (OID arcs such as 2.5.4.42)
 * and quads whose octets are all below 32 (versions) are skipped: in binaries they are far more
 * often OIDs or versions than addresses.
 */
export function isPublicIpString(s: string): boolean {
  const m = IP_STRING.exec(s);
  if (!m) return false;
  const o = [m[1], m[2], m[3], m[4]].map(Number);
  if (o.some((x) => x > 255)) return false;
  if (o.every((x) => x < 32)) return false;
  const [a, b] = o;
  if (a <= 2 || a === 10 || a === 127 || a >= 224) return false;
  if (a === 100 && b >= 64 && b < 128) return false;
  if (a === 169 && b === 254) return false;
  if (a === 172 && b >= 16 && b < 32) return false;
  if (a === 192 && (b === 168 || (b === 0 && o[2] === 0))) return false;
  if (a === 198 && (b === 18 || b === 19)) return false;
  return true;
}

export const CAPABILITY_RULES: readonly CapabilityRule[] = [
  { id: 'behavior.injection.remote_thread', name: 'inject code into another process (remote thread)', namespace: 'host-interaction/process/inject', attack: 'T1055', severity: 'high', confidence: 0.85,
    all: [any(1, api('VirtualAllocEx'), api('NtAllocateVirtualMemory'), api('ZwAllocateVirtualMemory')), any(1, api('WriteProcessMemory'), api('NtWriteVirtualMemory')), any(1, api('CreateRemoteThread'), api('CreateRemoteThreadEx'), api('NtCreateThreadEx'), api('RtlCreateUserThread'), api('QueueUserAPC'))] },
  { id: 'behavior.injection.hollowing', name: 'process hollowing', namespace: 'host-interaction/process/inject', attack: 'T1055.012', severity: 'high', confidence: 0.85,
    all: [any(1, api('NtUnmapViewOfSection'), api('ZwUnmapViewOfSection')), api('WriteProcessMemory'), any(1, api('SetThreadContext'), api('Wow64SetThreadContext')), api('ResumeThread')] },
  { id: 'behavior.injection.ptrace', name: 'write another process memory via ptrace', namespace: 'host-interaction/process/inject', attack: 'T1055.008', severity: 'low', confidence: 0.5,
    all: [api('ptrace'), any(1, api('process_vm_writev'), rx(/\/proc\/%d\/mem|PTRACE_POKETEXT/))] },
  { id: 'behavior.injection.ld_preload', name: 'hijack library loading via ld.so.preload', namespace: 'persistence/ld-preload', attack: 'T1574.006', severity: 'medium', confidence: 0.7,
    all: [str('/etc/ld.so.preload'), any(1, api('fopen'), api('open'), api('fwrite'), api('write'), rx(/>>?\s{0,4}\/etc\/ld\.so\.preload/))] },
  { id: 'behavior.persistence.run_key', name: 'persist via Run registry key', namespace: 'persistence/registry/run', attack: 'T1547.001', severity: 'medium', confidence: 0.75,
    all: [rx(/Software\\(?:WOW6432Node\\)?Microsoft\\Windows\\CurrentVersion\\Run/i), any(1, api('RegSetValueEx'), api('RegCreateKeyEx'), api('RegSetKeyValue'), api('SHSetValue'), rx(/\breg(?:\.exe)? add\b/i))] },
  { id: 'behavior.persistence.scheduled_task', name: 'persist via scheduled task', namespace: 'persistence/scheduled-tasks', attack: 'T1053.005', severity: 'medium', confidence: 0.7,
    all: [rx(/schtasks(?:\.exe)?\s{1,4}\/create/i)] },
  { id: 'behavior.persistence.service', name: 'create a Windows service', namespace: 'persistence/service', attack: 'T1543.003', severity: 'low', confidence: 0.5,
    all: [api('OpenSCManager'), api('CreateService'), api('StartService')] },
  { id: 'behavior.persistence.cron', name: 'persist via cron', namespace: 'persistence/cron', attack: 'T1053.003', severity: 'medium', confidence: 0.65,
    all: [any(1, rx(/\/var\/spool\/cron\/crontabs\/|\/etc\/cron\.d\/[a-z]|crontab -l[^\n]{0,60}\|\s{0,4}crontab -|\|\s{0,4}crontab -$/m)), any(1, api('system'), api('popen'), api('fopen'), api('execve'), api('execl'), api('execvp'))] },
  // Installers and completion scripts append to start-up files too (dual-use, as in static_script): low.
  { id: 'behavior.persistence.shell_profile', name: 'persist via shell start-up file', namespace: 'persistence/shell-profile', attack: 'T1546.004', severity: 'low', confidence: 0.5,
    all: [rx(/>>\s{0,4}(?:~|\$HOME|\/root|\/home\/[^/\s]{1,32})\/\.(?:bashrc|profile|bash_profile|zshrc)/)] },
  { id: 'behavior.persistence.systemd', name: 'install a systemd service', namespace: 'persistence/systemd', attack: 'T1543.002', severity: 'low', confidence: 0.5,
    all: [rx(/\/etc\/systemd\/system\/[a-z0-9_-]{1,64}\.service/i), str('ExecStart='), any(1, rx(/systemctl enable [a-z0-9_-]{1,64}/i), str('WantedBy=multi-user.target'))] },
  { id: 'behavior.credential.lsass', name: 'dump LSASS memory', namespace: 'collection/credentials/lsass', attack: 'T1003.001', severity: 'high', confidence: 0.8,
    all: [rx(/\blsass(?:\.exe)?\b/i), any(1, api('MiniDumpWriteDump'), api('ReadProcessMemory'), rx(/comsvcs(?:\.dll)?[^\n]{0,40}MiniDump/i))] },
  // The domain key alone (SAM\Domains\Account) is read for the machine SID (Ansible's setup does); the hashes sit under Users.
  { id: 'behavior.credential.sam', name: 'access the SAM/SECURITY hives', namespace: 'collection/credentials/sam', attack: 'T1003.002', severity: 'high', confidence: 0.75,
    all: [any(1, rx(/reg(?:\.exe)?\s{1,4}save\s{1,4}hklm\\(?:sam|security|system)\b/i), rx(/\\config\\SAM\b/i), rx(/SAM\\Domains\\Account\\Users\b/i))] },
  { id: 'behavior.credential.browser', name: 'steal browser saved credentials', namespace: 'collection/credentials/browser', attack: 'T1555.003', severity: 'high', confidence: 0.75,
    all: [any(1, str('Login Data'), str('logins.json'), str('key4.db'), str('signons.sqlite')), any(1, api('CryptUnprotectData'), str('Local State'), str('encrypted_key'), str('os_crypt')), any(1, str('\\Google\\Chrome\\User Data'), str('\\Mozilla\\Firefox\\Profiles'), str('/.config/google-chrome'), str('/.mozilla/firefox'), str('\\Microsoft\\Edge\\User Data'))] },
  { id: 'behavior.credential.wifi_or_vault', name: 'read stored Windows credentials', namespace: 'collection/credentials/vault', attack: 'T1555.004', severity: 'medium', confidence: 0.6,
    all: [any(1, api('CredEnumerate'), api('VaultEnumerateItems'), rx(/netsh\s{1,4}wlan\s{1,4}show\s{1,4}profile[^\n]{0,40}key=clear/i))] },
  { id: 'behavior.anti_analysis.debugger', name: 'detect a debugger', namespace: 'anti-analysis/anti-debugging', attack: 'T1622', severity: 'low', confidence: 0.5,
    all: [any(2, api('CheckRemoteDebuggerPresent'), api('NtQueryInformationProcess'), str('ProcessDebugPort'), api('OutputDebugString'), str('NtGlobalFlag'), api('ZwQueryInformationProcess'))] },
  { id: 'behavior.anti_analysis.vm', name: 'detect a virtual machine or sandbox', namespace: 'anti-analysis/anti-vm', attack: 'T1497.001', severity: 'low', confidence: 0.55,
    all: [any(2, str('VBoxService.exe'), str('VBoxTray.exe'), str('vmtoolsd.exe'), str('vmwaretray.exe'), str('SbieDll.dll'), str('VBOX__'), str('VMware Tools'), str('dbghelp.dll'), str('wine_get_unix_file_name'), str('cuckoomon'), str('SOFTWARE\\Oracle\\VirtualBox Guest Additions'), str('prl_cc.exe'), str('qemu-ga.exe'))] },
  { id: 'behavior.anti_analysis.tracer_check', name: 'check for a tracer via /proc/self/status', namespace: 'anti-analysis/anti-debugging', attack: 'T1622', severity: 'low', confidence: 0.5,
    all: [str('TracerPid'), api('ptrace')] },
  { id: 'behavior.keylogging.hook', name: 'log keystrokes via a low-level keyboard hook', namespace: 'collection/keylog', attack: 'T1056.001', severity: 'medium', confidence: 0.65,
    all: [api('SetWindowsHookEx'), api('CallNextHookEx'), any(1, api('GetAsyncKeyState'), api('GetKeyboardState'), api('MapVirtualKey'), api('GetKeyNameText'), api('ToUnicode'), api('ToAscii'))] },
  { id: 'behavior.keylogging.polling', name: 'log keystrokes via polling', namespace: 'collection/keylog', attack: 'T1056.001', severity: 'medium', confidence: 0.6,
    all: [api('GetAsyncKeyState'), api('GetForegroundWindow'), api('GetWindowText')] },
  { id: 'behavior.keylogging.evdev', name: 'read raw keyboard input devices', namespace: 'collection/keylog', attack: 'T1056.001', severity: 'low', confidence: 0.5,
    all: [rx(/\/dev\/input\/event/), any(1, str('keylog'), str('KEY_'), rx(/\/dev\/input\/by-path\/[^\n]{0,40}kbd/))] },
  { id: 'behavior.c2.hardcoded_ip', name: 'connect to a hard-coded IP address', namespace: 'communication/c2', attack: 'T1071', severity: 'low', confidence: 0.5,
    all: [PUBLIC_IP, any(1, api('connect'), api('WSAConnect'), api('InternetConnect'), api('WinHttpConnect'), api('InternetOpenUrl'), api('URLDownloadToFile')), any(1, api('socket'), api('WSAStartup'), api('InternetOpen'), api('WinHttpOpen'), api('URLDownloadToFile'))] },
  { id: 'behavior.c2.user_agent', name: 'send HTTP with a hard-coded browser user agent', namespace: 'communication/http', attack: 'T1071.001', severity: 'low', confidence: 0.45,
    all: [rx(/Mozilla\/[45]\.0 \((?:Windows|compatible|X11)/), any(1, api('InternetOpen'), api('WinHttpOpen'), api('HttpSendRequest'), api('HttpOpenRequest'))] },
  { id: 'behavior.c2.reverse_shell', name: 'bind a shell to a network socket', namespace: 'communication/c2/shell', attack: 'T1059', severity: 'high', confidence: 0.75,
    all: [any(1, api('connect'), api('WSAConnect')), any(1, api('dup2'), rx(/STARTF_USESTDHANDLES/)), any(1, str('/bin/sh'), str('/bin/bash'), str('cmd.exe')), PUBLIC_IP] },
  { id: 'behavior.c2.download_exec', name: 'download and run a file', namespace: 'communication/http/download', attack: 'T1105', severity: 'medium', confidence: 0.65,
    all: [any(1, api('URLDownloadToFile'), api('InternetReadFile'), api('WinHttpReadData')), any(1, api('WinExec'), api('ShellExecute'), api('ShellExecuteEx'), api('CreateProcess'))] },
  { id: 'behavior.impact.ransom', name: 'encrypt files for ransom', namespace: 'impact/ransomware', attack: 'T1486', severity: 'high', confidence: 0.7,
    all: [any(1, rx(/vssadmin(?:\.exe)? delete shadows/i), rx(/your (?:important )?files (?:have been|are) encrypted/i), rx(/[a-z2-7]{56}\.onion/), str('bcdedit /set {default} recoveryenabled no')), any(1, api('CryptEncrypt'), api('BCryptEncrypt'), api('EVP_EncryptInit_ex'), api('FindFirstFile'), api('opendir'), str('AES'))] },
  { id: 'behavior.impact.miner', name: 'mine cryptocurrency', namespace: 'impact/cryptomining', attack: 'T1496', severity: 'medium', confidence: 0.7,
    all: [rx(/stratum\+(?:tcp|ssl):\/\//i)] },
  { id: 'behavior.evasion.amsi', name: 'patch AMSI', namespace: 'defense-evasion/amsi', attack: 'T1562.001', severity: 'high', confidence: 0.75,
    all: [str('AmsiScanBuffer'), any(1, api('VirtualProtect'), api('WriteProcessMemory'), api('GetProcAddress'))] },
  { id: 'behavior.execution.shellcode_loader', name: 'allocate executable memory and run it', namespace: 'load-code/shellcode', attack: 'T1620', severity: 'medium', confidence: 0.5,
    all: [any(1, api('VirtualAlloc'), api('mmap')), any(1, api('VirtualProtect'), api('mprotect')), any(1, api('CreateThread'), api('EnumSystemLocales'), api('CreateFiber'), api('EnumChildWindows')), any(1, api('URLDownloadToFile'), api('InternetReadFile'), api('recv'), api('WinHttpReadData'), api('CryptDecrypt'))] },
];

export interface FeatureSet {
  /** Imported function names, lower-case, A/W suffix kept. */
  imports: Set<string>;
  /** Exact extracted strings (for APIs resolved by name at run time). */
  stringSet: Set<string>;
  /** Lower-case newline-joined strings, for substring checks. */
  lowerText: string;
  /** Original-case newline-joined strings, for regexes. */
  text: string;
  /**
   * Whether an API name found as a plain string counts (run-time resolution via GetProcAddress).
   * Off for ELF: shared objects carry their own and their dependencies' symbol names as strings.
   */
  apiByName: boolean;
}

/** Features for one file. PE/ELF imports come from the shared parse; everything gets strings. */
export function extractFeatures(file: FileAnalysis): FeatureSet {
  const imports = new Set<string>();
  let apiByName = true;
  const pe = file.pe();
  if (pe) for (const i of pe.importNames) imports.add(i.slice(i.indexOf('!') + 1).toLowerCase());
  else {
    const elf = file.elf();
    if (elf) {
      apiByName = false;
      for (const s of elf.importedSymbols) imports.add(s.toLowerCase());
    }
  }
  const strings = file.strings('behavior');
  const text = strings.join('\n');
  return { imports, stringSet: new Set(strings.map((s) => s.trim())), lowerText: text.toLowerCase(), text, apiByName };
}

function hasApi(fs: FeatureSet, name: string): string | null {
  const n = name.toLowerCase();
  for (const cand of [n, `${n}a`, `${n}w`, `_${n}`, `__imp_${n}`]) if (fs.imports.has(cand)) return name;
  if (fs.apiByName && (fs.stringSet.has(name) || fs.stringSet.has(`${name}A`) || fs.stringSet.has(`${name}W`))) return `${name} (by name)`;
  return null;
}

/** Returns evidence strings when the feature matches, null otherwise. */
function match(fs: FeatureSet, f: Feature): string[] | null {
  if ('api' in f) {
    const hit = hasApi(fs, f.api);
    return hit ? [hit] : null;
  }
  if ('string' in f) return fs.lowerText.includes(f.string.toLowerCase()) ? [f.string] : null;
  if ('regex' in f) {
    const m = f.regex.exec(fs.text);
    return m ? [m[0].trim().slice(0, 80)] : null;
  }
  if ('publicIp' in f) {
    for (const s of fs.stringSet) if (s.length <= 240 && isPublicIpString(s)) return [s];
    return null;
  }
  const hits: string[] = [];
  let n = 0;
  for (const sub of f.any) {
    const h = match(fs, sub);
    if (h) {
      n++;
      hits.push(...h);
    }
  }
  return n >= (f.min ?? 1) ? hits : null;
}

export interface Capability {
  id: string;
  name: string;
  namespace: string;
  attack: string;
  evidence: string[];
}

export function matchCapabilities(fs: FeatureSet): Capability[] {
  const caps: Capability[] = [];
  for (const rule of CAPABILITY_RULES) {
    const evidence: string[] = [];
    let ok = true;
    for (const feat of rule.all) {
      const h = match(fs, feat);
      if (!h) {
        ok = false;
        break;
      }
      evidence.push(...h);
    }
    if (ok) caps.push({ id: rule.id, name: rule.name, namespace: rule.namespace, attack: rule.attack, evidence });
  }
  return caps;
}

export function capabilityFindings(caps: Capability[]): Finding[] {
  const byId = new Map(CAPABILITY_RULES.map((r) => [r.id, r]));
  const findings: Finding[] = [];
  for (const c of caps) {
    const r = byId.get(c.id);
    if (!r) continue;
    findings.push(makeFinding(ENGINE, c.id, `Capability: ${c.name}`, r.severity, r.confidence, `Static features indicate the code can ${c.name} (${c.attack}); nothing was executed.`, c.namespace.split('/')[0], c.evidence.join(', ')));
  }
  const strong = new Set(caps.filter((c) => { const r = byId.get(c.id); return r && r.severity !== 'low'; }).map((c) => c.namespace.split('/')[0]));
  if (strong.size >= 3) {
    findings.push(makeFinding(ENGINE, 'behavior.multiple_capabilities', 'Malware.MultiCapability', 'high', 0.75, `Capabilities from ${strong.size} different groups together (${[...strong].join(', ')}), typical of a RAT or stealer.`, 'malware'));
  }
  return findings;
}

export const engine: Engine = {
  name: ENGINE,
  async scan(subject: ScanSubject): Promise<EngineOutput> {
    const fs = extractFeatures(subject.file);
    const caps = matchCapabilities(fs);
    return {
      findings: capabilityFindings(caps),
      report: { capabilities: caps.map((c) => ({ name: c.name, namespace: c.namespace, attack: c.attack, evidence: c.evidence.slice(0, 10) })), executed: false },
      note: subject.content.length > MAX_STRING_BYTES ? `strings were read from the first ${MAX_STRING_BYTES} bytes only` : undefined,
    };
  },
};

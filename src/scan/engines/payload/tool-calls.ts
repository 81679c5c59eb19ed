/**
 * tool_call_analysis: finds tool calls in OpenAI (tool_calls[].function, legacy function_call),
 * Anthropic (content[] tool_use), MCP (JSON-RPC tools/call) and Gemini (functionCall) JSON
 * shapes, and in free text (<tool_call> tags, <invoke> blocks, ReAct "Action:" lines,
 * name(arg=...) syntax); then judges each call's arguments for command execution, destructive
 * file operations, network exfiltration, credential access and privilege escalation.
 * Evidence quotes the flagged arguments (secrets masked) and is omitted for exfiltration.
 */
import { SEVERITY_RANK, type Engine, type EngineContext, type EngineOutput, type Finding, type ScanSubject, type Severity } from '../../types';
import { INDICATORS } from './code-extraction';
import { findSensitive, maskSecrets } from './secrets';
import { checkBudget, clip, extensionOf, payloadText, type BudgetSignal, deadlineSignal } from './text';

export type ToolCallCategory =
  | 'command_execution' | 'destructive_file_operation' | 'network_exfiltration' | 'credential_access' | 'privilege_escalation';

export interface ToolCallFinding {
  toolName: string;
  category: ToolCallCategory;
  severity: Severity;
  reason: string;
  evidence?: string;
}

export interface ToolCallAnalysisReport {
  detected: boolean;
  toolCalls: number;
  findings: ToolCallFinding[];
}

export type ToolCallShape = 'openai' | 'openai_function_call' | 'anthropic' | 'mcp' | 'gemini' | 'text_tag' | 'text_invoke' | 'text_react' | 'text_call';

export interface ToolCall {
  shape: ToolCallShape;
  name: string;
  args: unknown;
}

/**
 * JSON nodes visited per payload. Walks are iterative (no depth limit: nesting cannot hide a
 * call); a payload with more nodes than this is reported as not fully analysed.
 */
const MAX_NODES = 200_000;
/** Argument text judged per call; longer arguments are judged in full by windows (see flatten). */
const MAX_ARG_TEXT = 50_000;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseMaybeJson(s: unknown): unknown {
  if (typeof s !== 'string') return s;
  const t = s.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return s;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return s;
  }
}

/**
 * Tool calls anywhere inside a parsed JSON value (iterative walk, bounded size). Returns false
 * when the node budget ran out before the whole value was walked.
 */
export function callsFromJson(root: unknown, out: ToolCall[], budget = { nodes: MAX_NODES }): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    if (budget.nodes-- <= 0) return false;
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      continue;
    }
    if (!isRecord(v)) continue;
    if (Array.isArray(v.tool_calls)) {
      for (const tc of v.tool_calls) {
        if (isRecord(tc) && isRecord(tc.function) && typeof tc.function.name === 'string') {
          out.push({ shape: 'openai', name: tc.function.name, args: parseMaybeJson(tc.function.arguments) });
        }
      }
    }
    if (isRecord(v.function_call) && typeof v.function_call.name === 'string') {
      out.push({ shape: 'openai_function_call', name: v.function_call.name, args: parseMaybeJson(v.function_call.arguments) });
    }
    if (v.type === 'tool_use' && typeof v.name === 'string') {
      out.push({ shape: 'anthropic', name: v.name, args: v.input });
    }
    if (v.method === 'tools/call' && isRecord(v.params) && typeof v.params.name === 'string') {
      out.push({ shape: 'mcp', name: v.params.name, args: v.params.arguments });
    }
    if (isRecord(v.functionCall) && typeof v.functionCall.name === 'string') {
      out.push({ shape: 'gemini', name: v.functionCall.name, args: v.functionCall.args });
    }
    for (const [k, child] of Object.entries(v)) {
      if (k === 'tool_calls' || k === 'function_call' || k === 'functionCall') continue;
      if (k === 'input' && v.type === 'tool_use') continue;
      if (k === 'params' && v.method === 'tools/call') continue;
      if (typeof child === 'object' && child !== null) stack.push(child);
      else if (typeof child === 'string' && child.length < 1_000_000 && /^\s*[{[]/.test(child) && /tool_use|tool_calls|tools\/call|function_call/.test(child)) {
        const parsed = parseMaybeJson(child);
        if (parsed !== child) stack.push(parsed);
      }
    }
  }
  return true;
}

/** Parses "a=1, b='x y', c=\"z\"" style argument lists into an object (values as strings). */
function parseKwargs(s: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  const re = /([A-Za-z_][\w]{0,40})\s{0,2}[=:]\s{0,2}(?:"((?:[^"\\]|\\.){0,4000})"|'((?:[^'\\]|\\.){0,4000})'|([^,)]{0,4000}))/g;
  let m: RegExpExecArray | null;
  let any = false;
  while ((m = re.exec(s)) !== null) {
    out[m[1]] = (m[2] ?? m[3] ?? m[4] ?? '').trim();
    any = true;
  }
  return any ? out : s;
}

function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      values.push(JSON.parse(t) as unknown);
      return values;
    } catch {
      // Not one document: try JSON Lines and embedded blocks below.
    }
  }
  let pos = 0;
  while (pos < text.length && values.length < 10_000) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    const line = text.slice(pos, nl).trim();
    if (line.startsWith('{') && line.endsWith('}')) {
      try {
        values.push(JSON.parse(line) as unknown);
      } catch {
        // A line that only looks like JSON.
      }
    }
    pos = nl + 1;
  }
  const fence = /```(?:json|jsonl|javascript|js)?[ \t]{0,10}\n([^`]{2,2000000})```/g;
  let m: RegExpExecArray | null;
  while ((m = fence.exec(text)) !== null && values.length < 10_000) {
    try {
      values.push(JSON.parse(m[1]) as unknown);
    } catch {
      // Not JSON.
    }
  }
  return values;
}

/** Free-text tool-call syntaxes. */
function callsFromText(text: string, isCode: boolean, out: ToolCall[]): void {
  const tag = /<tool_call>([^<]{1,20000})<\/tool_call>/g;
  let m: RegExpExecArray | null;
  while ((m = tag.exec(text)) !== null) {
    const body = m[1].trim();
    const parsed = parseMaybeJson(body);
    if (isRecord(parsed) && typeof parsed.name === 'string') {
      out.push({ shape: 'text_tag', name: parsed.name, args: parseMaybeJson(parsed.arguments ?? parsed.parameters ?? parsed.input ?? parsed.args) });
    } else {
      const c = /^([A-Za-z_][\w.-]{0,60})\s{0,2}\(([^]{0,20000})\)\s*$/.exec(body);
      if (c) out.push({ shape: 'text_tag', name: c[1], args: parseKwargs(c[2]) });
    }
  }
  const invoke = /<invoke name="([^"]{1,80})">/g;
  let nextClose = -2;
  while ((m = invoke.exec(text)) !== null) {
    const bodyStart = m.index + m[0].length;
    if (nextClose !== -1 && nextClose < bodyStart) nextClose = text.indexOf('</invoke>', bodyStart);
    if (nextClose === -1) break;
    if (nextClose - bodyStart > 20000) continue;
    const args: Record<string, string> = {};
    const p = /<parameter name="([^"]{1,80})">([^<]{0,20000})<\/parameter>/g;
    let pm: RegExpExecArray | null;
    const body = text.slice(bodyStart, nextClose);
    while ((pm = p.exec(body)) !== null) args[pm[1]] = pm[2];
    out.push({ shape: 'text_invoke', name: m[1], args });
  }
  const react = /(?<=^|\n)[ \t]{0,8}action[ \t]{0,3}:[ \t]{0,3}([A-Za-z_][\w.-]{0,60})[ \t]{0,8}\r?\n[ \t]{0,8}action[ \t]input[ \t]{0,3}:[ \t]{0,3}([^\n]{0,20000})/gi;
  while ((m = react.exec(text)) !== null) out.push({ shape: 'text_react', name: m[1], args: parseMaybeJson(m[2]) });
  if (isCode) return;
  // name(key=value, ...) on its own line or in backticks: how models write calls in prose.
  const call = /(?<=^|\n|`)[ \t]{0,8}(?:call(?:ing)?:?[ \t]{1,3})?([A-Za-z_][\w.]{1,60})\(([A-Za-z_]\w{0,40}[ \t]{0,2}=[^\n]{0,4000})\)[ \t]{0,3}(?=`|\r?\n|$)/g;
  while ((m = call.exec(text)) !== null) out.push({ shape: 'text_call', name: m[1], args: parseKwargs(m[2]) });
}

/** Tool calls in a payload; `complete` is false when the JSON was too large to walk in full. */
export function extractToolCalls(text: string, name: string): { calls: ToolCall[]; complete: boolean } {
  const calls: ToolCall[] = [];
  let complete = true;
  if (/tool_calls|function_call|tool_use|tools\/call|functionCall/.test(text)) {
    const budget = { nodes: MAX_NODES };
    for (const v of jsonValues(text)) if (!callsFromJson(v, calls, budget)) complete = false;
  }
  const ext = extensionOf(name);
  callsFromText(text, ['py', 'js', 'ts', 'mjs', 'cjs', 'sh', 'ps1', 'rb', 'go', 'java', 'php'].includes(ext), calls);
  return { calls, complete };
}

/**
 * All string content of the arguments (keys before their values), joined. Iterative, so any
 * nesting depth is read; the result is cut into windows of MAX_ARG_TEXT characters (with
 * overlap), every one of which is judged, so neither depth nor length hides an argument.
 */
function flatten(args: unknown): string[] {
  const parts: string[] = [];
  const stack: unknown[] = [args];
  let nodes = MAX_NODES;
  while (stack.length > 0 && nodes-- > 0) {
    const v = stack.pop();
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parts.push(String(v));
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    else if (isRecord(v)) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i][1], `${entries[i][0]}:`);
    }
  }
  const all = parts.join('\n');
  if (all.length <= MAX_ARG_TEXT) return [all];
  const windows: string[] = [];
  for (let i = 0; i < all.length; i += MAX_ARG_TEXT - 1000) windows.push(all.slice(i, i + MAX_ARG_TEXT));
  return windows;
}

interface Check {
  category: ToolCallCategory;
  severity: Severity;
  reason: string;
  re: RegExp;
}

const SUSPICIOUS_HOST = /(?:pastebin\.com|paste\.ee|hastebin|ghostbin|webhook\.site|requestbin|pipedream\.net|ngrok(?:-free)?\.(?:io|app)|transfer\.sh|file\.io|anonfiles|discord(?:app)?\.com\/api\/webhooks|api\.telegram\.org\/bot|burpcollaborator|oast\.(?:fun|pro|live|site|online|me)|interact\.sh|\.onion\b|temp\.sh|0x0\.st|https?:\/\/(?:\d{1,3}\.){3}\d{1,3})/i;

const CHECKS: Check[] = [
  // privilege escalation
  { category: 'privilege_escalation', severity: 'high', reason: 'Runs a command as root with sudo', re: /(?<![\w-])sudo\s{1,3}(?!-l\b|-v\b)/i },
  { category: 'privilege_escalation', severity: 'high', reason: 'Switches to the root user', re: /(?<![\w-])su\s{1,3}(?:-\s{1,3})?(?:root\b|-c\b|-$)|(?<![\w-])su\s{0,3}$/im },
  { category: 'privilege_escalation', severity: 'high', reason: 'Sets the setuid/setgid bit or hands a file to root', re: /\bchmod\s{1,3}(?:[ugoa]{0,3}\+s\b|[2467][0-7]{3}\b)|\bchown\s{1,3}root\b|\bsetcap\s/i },
  { category: 'privilege_escalation', severity: 'critical', reason: 'Edits sudoers or grants passwordless sudo', re: /\/etc\/sudoers|\bNOPASSWD\b|\bvisudo\b/i },
  { category: 'privilege_escalation', severity: 'high', reason: 'Adds a user to an administrative group', re: /\busermod\s{1,3}-a?G\s{1,3}(?:sudo|wheel|admin|root|docker)\b|\bnet\s{1,3}localgroup\s{1,3}administrators\b[^\n]{0,80}\/add|\badduser\s{1,3}\S{1,40}\s{1,3}(?:sudo|wheel|admin)\b/i },
  { category: 'privilege_escalation', severity: 'high', reason: 'Starts a privileged container or enters the host namespaces', re: /--privileged\b|-v\s{1,3}\/:\/|\bnsenter\b[^\n]{0,40}-t\s{1,3}1\b|\bpkexec\b|\brunas\s{1,3}\/user:(?:administrator|system)/i },
  // credential access
  { category: 'credential_access', severity: 'high', reason: 'Reads a credential or key file', re: /\.ssh[\/\\](?:id_(?:rsa|dsa|ecdsa|ed25519)(?![\w.])|authorized_keys)|\/etc\/(?:shadow|gshadow)\b|\.aws[\/\\]credentials\b|\.kube[\/\\]config\b|\.docker[\/\\]config\.json|\.git-credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|(?:^|[\/\\\s"'])\.env(?:\.[a-z]{2,12})?(?=$|["'\s])|\.config[\/\\]gcloud|\.azure[\/\\]|login data|key4\.db|\.gnupg[\/\\]|\.password-store/im },
  { category: 'credential_access', severity: 'medium', reason: 'Reads the system account list', re: /\/etc\/passwd\b/i },
  { category: 'credential_access', severity: 'high', reason: 'Dumps credentials from memory or the OS keychain', re: /\bmimikatz\b|\bsekurlsa::|\blsass\b|\bsecurity\s{1,3}(?:find|dump)-(?:generic|internet)-password\b|\breg\s{1,3}save\s{1,3}hklm\\(?:sam|security|system)\b/i },
  { category: 'credential_access', severity: 'medium', reason: 'Enumerates environment variables or secrets', re: /(?<![\w-])(?:printenv|env)\s{0,3}(?:$|\||>)|\bprocess\.env\b|os\.environ\b|\baws\s{1,3}secretsmanager\s{1,3}get-secret-value\b|\bvault\s{1,3}(?:kv\s{1,3})?read\b|\bkubectl\s{1,3}get\s{1,3}secrets?\b/im },
  // destructive operations
  { category: 'destructive_file_operation', severity: 'critical', reason: 'Recursively deletes the root, home or a system directory', re: /\brm\s{1,3}(?:-{1,2}[a-z-]{1,30}\s{1,3}){1,4}(?:\/(?:etc|usr|var|bin|boot|home|lib|opt|root|srv|sys)?\/?\*?|~\/?|\$HOME\/?)(?![\w.\/-])|\bmkfs\b|\bdd\s[^\n]{0,200}\bof=\/dev\/|\bformat\s{1,3}[a-z]:|Remove-Item\b[^\n]{0,100}-Recurse[^\n]{0,100}[A-Za-z]:\\(?:\s|$|Windows)|\brd\s{1,3}\/s\s{1,3}\/q\s{1,3}[a-z]:\\|\bvssadmin\s{1,3}delete\s{1,3}shadows/i },
  { category: 'destructive_file_operation', severity: 'high', reason: 'Recursive forced delete', re: /\brm\s{1,3}-(?:[a-z]{0,4}r[a-z]{0,4}f|[a-z]{0,4}f[a-z]{0,4}r)[a-z]{0,4}\b|\bshred\s|\bfind\s[^\n]{0,200}-delete\b|\bgit\s{1,3}(?:push\s{1,3}[^\n]{0,60}--force|reset\s{1,3}--hard|clean\s{1,3}-[a-z]{0,3}f)/i },
  { category: 'destructive_file_operation', severity: 'high', reason: 'Drops or empties database objects', re: /\bdrop\s{1,3}(?:table|database|schema|collection)\b|\btruncate\s{1,3}table\b|\bdelete\s{1,3}from\s{1,3}[\w."`]{1,60}\s{0,3}(?:;|$)|\bflushall\b|\.drop\(\)|\bdropDatabase\(\)/im },
  { category: 'destructive_file_operation', severity: 'high', reason: 'Writes to a startup, cron, shell profile or system file', re: /(?:^|[\s"'])(?:\/etc\/(?:cron[\w.\/]{0,40}|rc\.local|profile|hosts|ld\.so\.preload|systemd\/[\w.\/-]{1,80})|~\/\.(?:bashrc|bash_profile|zshrc|profile)|\/root\/\.(?:bashrc|profile)|crontab\s{1,3}-)/im },
];

const DANGER_NAME = {
  shell: /(?:^|[_.-])(?:exec|execute|shell|bash|terminal|run_command|run_shell|run_terminal|cmd|command|powershell|subprocess|system|run_code|code_interpreter|python|eval|sh)(?:$|[_.-])|^(?:run|exec|bash|shell|terminal|execute_command|run_command)$/i,
  delete: /(?:^|[_.-])(?:delete|remove|rm|unlink|rmdir|drop|truncate|wipe|destroy|purge|erase)(?:$|[_.-])/i,
  network: /(?:^|[_.-])(?:http|https|fetch|request|curl|wget|post|put|upload|send|webhook|email|mail|slack|browse|navigate|open_url|web|api_call|post_message)(?:$|[_.-])/i,
  secret: /(?:^|[_.-])(?:secret|secrets|credential|credentials|password|passwords|api_key|apikey|token|tokens|vault|keychain)(?:$|[_.-])/i,
};

const SYSTEM_PATH = /^(?:\/|\/\*|~|~\/|\$HOME|C:\\?|\/(?:etc|usr|var|bin|boot|lib|root|home)(?:\/\*?)?)$/i;

function evidenceOf(argText: string, re?: RegExp): string {
  if (re) {
    const m = re.exec(argText);
    re.lastIndex = 0;
    if (m) {
      const s = Math.max(0, m.index - 40);
      return clip(maskSecrets(argText.slice(s, m.index + m[0].length + 60)), 200);
    }
  }
  return clip(maskSecrets(argText.slice(0, 400)), 200);
}

export function analyzeCall(call: ToolCall): ToolCallFinding[] {
  const out: ToolCallFinding[] = [];
  for (const window of flatten(call.args)) judgeArguments(call, window, out);
  return out;
}

/** Adds the findings for one window of a call's argument text to `out` (worst per category). */
function judgeArguments(call: ToolCall, argText: string, out: ToolCallFinding[]): void {
  const toolName = clip(maskSecrets(call.name), 100);
  const argLower = argText.toLowerCase();
  const push = (category: ToolCallCategory, severity: Severity, reason: string, re?: RegExp): void => {
    if (out.some((f) => f.category === category && SEVERITY_RANK[f.severity] >= SEVERITY_RANK[severity])) return;
    const existing = out.findIndex((f) => f.category === category);
    const f: ToolCallFinding = { toolName, category, severity, reason };
    if (category !== 'network_exfiltration') f.evidence = evidenceOf(argText, re);
    if (existing >= 0) out[existing] = f;
    else out.push(f);
  };

  for (const c of CHECKS) if (c.re.test(argText)) push(c.category, c.severity, c.reason, c.re);

  const shellLike = DANGER_NAME.shell.test(call.name) || /(?:^|\n)(?:command|cmd|script|code|shell):/i.test(argText);
  for (const ind of INDICATORS) {
    if (!ind.needles.some((n) => argLower.includes(n))) continue;
    for (const re of ind.patterns) {
      re.lastIndex = 0;
      const m = re.exec(argLower);
      re.lastIndex = 0;
      if (!m || (ind.accept && !ind.accept(m[0]))) continue;
      const category: ToolCallCategory = ind.id === 'destructive_command' ? 'destructive_file_operation'
        : ind.id === 'credential_file_access' ? 'credential_access' : 'command_execution';
      push(category, ind.severity, `Arguments contain ${ind.name.toLowerCase()}`, new RegExp(re.source, 'i'));
      break;
    }
  }
  if (shellLike && !out.some((f) => f.category === 'command_execution')) {
    const risky = /\b(?:curl|wget|nc|ncat|bash\s{1,3}-c|sh\s{1,3}-c|python[23]?\s{1,3}-c|perl\s{1,3}-e|base64\s{1,3}-d|eval|iex|invoke-expression|chmod\s{1,3}\+x)\b/i;
    if (risky.test(argText)) push('command_execution', 'high', 'Shell tool runs a command that fetches, decodes or spawns code', risky);
    else if (argText.trim() !== '') push('command_execution', 'low', 'Shell command execution requested');
  }

  // Destructive tools pointed at system locations, recursively.
  if (DANGER_NAME.delete.test(call.name)) {
    const rec = isRecord(call.args) ? call.args : {};
    const target = Object.values(rec).find((v) => typeof v === 'string' && SYSTEM_PATH.test(v.trim()));
    const recursive = Object.entries(rec).some(([k, v]) => /recursive|force|all/i.test(k) && v === true);
    if (target !== undefined) push('destructive_file_operation', 'critical', 'Delete tool targets the root, home or a system directory', new RegExp(String(target).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')));
    else if (recursive) push('destructive_file_operation', 'high', 'Recursive delete requested', /recursive|force|all/i);
    else push('destructive_file_operation', 'medium', 'Delete operation requested');
  }
  if (DANGER_NAME.secret.test(call.name)) push('credential_access', 'medium', 'Tool reads secrets or credentials');

  // Exfiltration: data leaving for a suspicious host, secrets in outbound arguments,
  // or a command that uploads files.
  const urls = argText.match(/https?:\/\/[^\s"'<>]{1,500}/g) ?? [];
  const outbound = DANGER_NAME.network.test(call.name) || urls.length > 0 || /\bcurl\b|\bwget\b|\bscp\b|\brsync\b|\bnc\b|\bftp\b/i.test(argText);
  if (outbound) {
    const secrets = findSensitive(argText).filter((h) => h.category === 'secret' || h.type === 'payment_card' || h.type === 'us_ssn');
    const upload = /\bcurl\b[^\n]{0,200}(?:-d\s{0,2}@|--data(?:-binary)?\s{1,3}@|-F\s{0,2}["']?\w{1,30}=@|-T\s)|\bscp\s[^\n]{0,200}\s[\w.-]{1,64}@[\w.-]{1,253}:|\bnc\s[^\n]{0,100}<\s{0,2}\S|\bwget\s[^\n]{0,200}--post-file|Invoke-(?:WebRequest|RestMethod)[^\n]{0,200}-InFile/i;
    if (SUSPICIOUS_HOST.test(argText)) push('network_exfiltration', 'high', 'Sends data to a paste, webhook-capture, tunnel or raw-IP endpoint');
    if (secrets.length > 0 && (DANGER_NAME.network.test(call.name) || upload.test(argText) || urls.length > 0)) {
      push('network_exfiltration', 'critical', `Outbound call carries ${secrets.length} secret value${secrets.length === 1 ? '' : 's'}`);
    }
    if (upload.test(argText)) push('network_exfiltration', 'high', 'Command uploads a local file to a remote host');
    if (out.some((f) => f.category === 'credential_access') && (DANGER_NAME.network.test(call.name) || upload.test(argText))) {
      push('network_exfiltration', 'critical', 'Credential material is read and sent out in the same call');
    }
  }
}

export function analyzeToolCalls(text: string, name: string, signal?: BudgetSignal): ToolCallAnalysisReport & { complete: boolean } {
  const { calls, complete } = extractToolCalls(text, name);
  checkBudget(signal);
  const findings: ToolCallFinding[] = [];
  for (const call of calls) {
    checkBudget(signal);
    for (const f of analyzeCall(call)) if (findings.length < 100) findings.push(f);
  }
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  return {
    detected: findings.some((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK.medium),
    toolCalls: calls.length,
    findings,
    complete,
  };
}

const CATEGORY_NAMES: Record<ToolCallCategory, string> = {
  command_execution: 'Tool call: command execution',
  destructive_file_operation: 'Tool call: destructive operation',
  network_exfiltration: 'Tool call: network exfiltration',
  credential_access: 'Tool call: credential access',
  privilege_escalation: 'Tool call: privilege escalation',
};

/** Said when the payload's JSON held more nodes than one scan walks: unread is never clean. */
const NOT_FULLY_READ: Finding = {
  id: 'payload.tool_call.not_fully_analysed',
  name: 'Tool calls not fully analysed',
  severity: 'medium',
  confidence: 0.5,
  category: 'tool-call',
  description: `The payload's JSON has more than ${MAX_NODES} nodes; tool calls beyond them were not read.`,
};

function toFindings(report: ToolCallAnalysisReport, complete: boolean): Finding[] {
  return [...(complete ? [] : [NOT_FULLY_READ]), ...report.findings.map((f) => ({
    id: `payload.tool_call.${f.category}`,
    name: CATEGORY_NAMES[f.category],
    severity: f.severity,
    confidence: 0.8,
    category: 'tool-call',
    description: `${f.toolName}: ${f.reason}.`,
    excerpt: f.evidence,
  }))];
}

export const toolCallAnalysisEngine: Engine = {
  name: 'tool_call_analysis',
  async scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput> {
    const { complete, ...report } = analyzeToolCalls(payloadText(subject), subject.name, deadlineSignal(ctx));
    return { findings: toFindings(report, complete), report: { toolCallAnalysis: report } };
  },
};

/**
 * Capability rules per MITRE ATT&CK technique, written for this project from the techniques'
 * public descriptions (ATT&CK, GTFOBins, LOLBAS): what a script can do, not what a known sample
 * looks like. They read the views of script-normalize.ts (lower-cased, whitespace collapsed,
 * obfuscation and base64 undone), so one rule covers `IEX`, `I`E`X`, 'IE'+'X' and an encoded
 * command alike.
 *
 * Each rule: a technique id, a severity, literal needles (the regexes run only when one occurs),
 * and one or more regexes that must all match in the same view. Patterns are linear: literal
 * anchors and bounded gaps only.
 *
 * Severity reflects what the capability means on its own: an interactive shell handed to a
 * network peer is an attack (critical); a download piped into a shell is how many installers
 * work, so it is low from a named https host and high from a bare IP, plain http or a temp
 * path; persistence and scheduled tasks are what admin scripts do too, so they are low alone
 * and become high next to another offensive technique (`chain` in analyzeTechniques).
 */
import type { Severity } from '../types';
import { NeedleGate } from './needle-index';
import { scriptViews, type ScriptView, withoutWordLists } from './script-normalize';

export interface TechniqueRule {
  id: string;
  /** ATT&CK technique id(s), most specific first. */
  technique: string;
  name: string;
  tactic: 'execution' | 'command_and_control' | 'defense_evasion' | 'persistence' | 'credential_access' | 'impact' | 'privilege_escalation';
  severity: Severity;
  needles: string[];
  all: RegExp[];
  /** Persistence-like rules that admin scripts share: low alone, high in a chain. */
  dual?: boolean;
  /** When set, `all` are alternatives of which at least this many distinct ones must match. */
  atLeast?: number;
  /** When set, the other patterns must match within this many characters of a match of the first. */
  near?: number;
}

export interface TechniqueHit {
  rule: TechniqueRule;
  severity: Severity;
  via: string;
  excerpt: string;
  /** Why the severity is below the rule's own (said in the finding's description). */
  softened?: string;
}

const T = (
  id: string, technique: string, name: string, tactic: TechniqueRule['tactic'], severity: Severity, needles: string[], ...all: RegExp[]
): TechniqueRule => ({ id, technique, name, tactic, severity, needles, all });
const dual = (r: TechniqueRule): TechniqueRule => ({ ...r, dual: true });
const atLeast = (n: number, r: TechniqueRule): TechniqueRule => ({ ...r, atLeast: n });
const near = (chars: number, r: TechniqueRule): TechniqueRule => ({ ...r, near: chars });

const SHELL = String.raw`(?:/bin/|/usr/bin/)?(?:ba|da|z|k|c|tc|fi)?sh\b`;
const HOST = String.raw`(?:\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|[a-z0-9$({}._-]{1,253})`;
/**
 * A download from somewhere an installer would not use: a bare IP, plain http, a tunnel, a paste
 * site, an executable from a repository's raw files. Install scripts on raw.githubusercontent.com
 * (Homebrew, nvm, Oh My Zsh) are how vendors publish them, so a script from there is not shady.
 */
const SHADY_URL = String.raw`(?:https?://\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|http://(?!localhost|127\.)|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{2,5}/|ngrok|pastebin\.com/raw|transfer\.sh|raw\.githubusercontent\.com/[^\s/]{1,60}/[^\s/]{1,60}/[^\s]{0,80}\.exe\b)`;
/** Where a script would not upload a local file in earnest: a bare IP or plain http. */
const BARE_URL = String.raw`(?:https?://\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|http://(?!localhost|127\.))`;
const TEMP = String.raw`(?:/tmp/|/dev/shm/|/var/tmp/|%temp%|\$env:temp|\$env:tmp|\\temp\\|\\appdata\\|\\users\\public\\|\\programdata\\)`;

/**
 * What makes a /dev/tcp connection a shell for the peer: an interactive shell, output and errors
 * sent to the socket (`>& /dev/tcp/...`), standard input taken from it (`0>&1`, `0<&5`), a shell
 * reading its commands from the connection's descriptor (`sh <&196`), or a loop that runs each
 * line it reads (`while read l; do $l`). Opening the connection, writing a request and reading
 * the answer (`exec 3<>/dev/tcp/host/80; echo GET >&3; cat <&3`) is a client, as in the example
 * clients packages ship (wireguard-tools' ncat scripts): a socket, not an attack.
 */
export const DEV_TCP_SHELL = String.raw`\b(?:ba|z|k)?sh\b[^\n]{0,40}\s-i\b|[0-9]?>&\s{0,2}/dev/(?:tcp|udp)|0>&1|0<&\d|\b(?:ba|da|z|k)?sh\s{1,4}(?:-\w{1,3}\s{1,4}){0,2}<&\s{0,2}\d|\bwhile\s{1,3}read\b[\s\S]{0,80}?\bdo\s{1,4}(?:\$\{?\w+\}?\s{0,4}(?:[0-9]?>|2>|;|\||$)|["']\$\w+|eval\b|\$\(|(?:ba|z|k)?sh\s{1,4}-c\b)`;

/** Four or more private-key and certificate-store extensions in a row, as a list. */
const KEY_EXTENSIONS = String.raw`(?:\\?\.(?:key|pgp|gpg|ppk|p12|pem|pfx|asc|jks|kdbx|ovpn)["'\s,;)]{1,6}){4}`;
const keySearch = (pattern: string, needles: string[]): TechniqueRule =>
  T('cred.private_key_search', 'T1552.004', 'Directories are searched recursively for private keys', 'credential_access', 'medium', needles, new RegExp(pattern));

export const TECHNIQUE_RULES: readonly TechniqueRule[] = [
  // ---- Reverse and bind shells: T1059 (interpreter) over a raw network channel (T1095) ----
  T('revshell.bash_dev_tcp', 'T1059.004', 'Reverse shell through /dev/tcp', 'execution', 'critical', ['/dev/tcp/', '/dev/udp/'],
    new RegExp(String.raw`/dev/(?:tcp|udp)/${HOST}/\d{1,5}`), new RegExp(DEV_TCP_SHELL)),
  T('revshell.netcat_exec', 'T1059.004', 'Netcat hands a shell to the network', 'execution', 'critical', ['nc', 'netcat', 'ncat'],
    new RegExp(String.raw`(?<![\w.-])(?:nc|ncat|netcat|nc\.traditional|nc\.openbsd|busybox nc|nc\.exe|nc64\.exe)\b[^\n|;]{0,160}\s(?:-[a-z]{0,4}[ec]|--exec|--sh-exec|--lua-exec)\s{0,2}\\?["']?(?:${SHELL}|cmd(?:\.exe)?|powershell(?:\.exe)?|/bin/|python)`)),
  T('revshell.fifo_pipe', 'T1059.004', 'Shell wired to a network tool through a named pipe', 'execution', 'critical', ['mkfifo', 'mknod'],
    new RegExp(String.raw`\b(?:mkfifo|mknod)\b[^\n]{0,200}${SHELL}[^\n]{0,80}\|\s{0,2}(?:nc|ncat|netcat|telnet|openssl\ss_client|socat)\b|\b(?:mkfifo|mknod)\b[^\n]{0,200}\b(?:nc|ncat|netcat|telnet|openssl\ss_client)\b[^\n]{0,200}${SHELL}`)),
  T('revshell.telnet_pipe', 'T1059.004', 'Shell piped between telnet connections', 'execution', 'critical', ['telnet'],
    new RegExp(String.raw`\btelnet\s${HOST}\s\d{1,5}\s{0,2}\|\s{0,2}${SHELL}[^\n]{0,40}\|\s{0,2}telnet\b`)),
  T('revshell.openssl', 'T1573.002', 'Shell over an OpenSSL client connection', 'command_and_control', 'critical', ['s_client'],
    /\bopenssl\ss_client\b[^\n]{0,120}-connect\b/, new RegExp(String.raw`${SHELL}[^\n]{0,40}-i\b|\|\s{0,2}${SHELL}|mkfifo|\bexec\b`)),
  T('revshell.socat', 'T1059.004', 'socat connects a shell to the network', 'execution', 'critical', ['socat'],
    /\bsocat\b[^\n]{0,200}\b(?:exec|system):[^\n]{0,80}(?:sh\b|bash|cmd|powershell|pty)/),
  T('revshell.python', 'T1059.006', 'Python connects a socket to a shell', 'execution', 'critical', ['socket'],
    /\bsocket\.socket\s{0,2}\(|\bsocket\(\s{0,2}socket\.af_inet|from socket import|import socket/, /\.connect\s{0,2}\(\s{0,2}\(|\.connect\s{0,2}\(\s{0,2}\w{1,20}\s{0,2}\)|\.bind\s{0,2}\(\s{0,2}\(/,
    // dup2 alone is what servers and their tests do with descriptors: the shell must be named.
    /\bpty\.spawn\s{0,2}\(|subprocess\.(?:call|popen|run|check_output)\s{0,2}\(\s{0,2}\[?\s{0,2}["'](?:\/bin\/)?(?:ba)?sh|stdin\s{0,2}=\s{0,2}\w{1,20}\.fileno\(\)|\bos\.dup2\s{0,2}\([^\n]{0,400}["'](?:\/bin\/)?(?:ba|z|da)?sh\b|\bos\.(?:system|exec\w{1,3}|spawn\w{1,3})\s{0,2}\(\s{0,2}["'](?:\/bin\/)?(?:ba|z|da)?sh\b/),
  T('revshell.perl', 'T1059', 'Perl connects a socket to a shell', 'execution', 'critical', ['socket', 'io::socket'],
    /\buse\ssocket\b|\bsocket\s{0,2}\(\s{0,2}s\s{0,2},|io::socket::inet|-mio\b|-msocket\b/, /\bconnect\s{0,2}\(|peeraddr\s{0,2}(?:=>|,)|->new\s{0,2}\(\s{0,2}["'][^"'\n]{1,80}:\d{1,5}|\bbind\s{0,2}\(\s{0,2}s\s{0,2},/,
    // A read loop or fdopen alone is any network client: the shell or the command run must show.
    /\bexec\s{0,2}\(?\s{0,2}["'](?:\/bin\/)?(?:ba)?sh\b|open\s{0,2}\(\s{0,2}stdin\s{0,2},\s{0,2}["']>&|\bsystem\s{0,2}\(?\s{0,2}\$_|while\s{0,2}\(?\s{0,2}<\s{0,2}\$?\w{0,10}\s{0,2}>\s{0,2}\)?\s{0,2}\{?[^\n]{0,100}(?:\bsystem\b|\bexec\b|\bqx\b|`\s{0,2}\$_)/),
  T('revshell.php', 'T1059', 'PHP opens a socket and runs a shell on it', 'execution', 'critical', ['fsockopen', 'socket_create', 'stream_socket_client'],
    // A socket next to a shell: a mail or HTTP client opens sockets and may run a program, so the
    // shell must be named (`/bin/sh`, `sh -i`, `cmd`) or wired to a descriptor, not just present.
    /\b(?:fsockopen|socket_create|stream_socket_client)\s{0,2}\(/, /\b(?:exec|shell_exec|system|passthru|proc_open|popen)\s{0,2}\(\s{0,2}["'](?:\/bin\/)?(?:ba|z|da)?sh\b|\bproc_open\s{0,2}\(\s{0,2}["'][^"'\n]{0,40}\b(?:sh|bash|cmd(?:\.exe)?)\b|[<>]&\s{0,2}3\b|\barray\s{0,2}\(\s{0,2}0\s{0,2}=>\s{0,2}\$sock|["'][^"'\n]{0,80}\/bin\/(?:ba)?sh\s{1,2}-i\b/),
  T('revshell.ruby', 'T1059', 'Ruby opens a TCP socket and runs a shell on it', 'execution', 'critical', ['tcpsocket', 'rsocket'],
    /\btcpsocket\.(?:new|open)\s{0,2}\(|-rsocket\b/, /\bexec\s{0,2}(?:\(|["'])|\bspawn\s{0,2}\(|io\.popen|\bsh\s{1,3}-i\b|<&%d|\bsystem\s{0,2}\(/),
  T('revshell.awk', 'T1059.004', 'awk opens a TCP connection and runs the commands it receives', 'execution', 'critical', ['/inet/tcp/', '/inet/udp/'],
    /\/inet\/(?:tcp|udp)\/\d{1,5}\//),
  T('revshell.lua', 'T1059', 'Lua opens a TCP socket and runs what it receives', 'execution', 'critical', ['socket'],
    /require\s{0,2}\(?\s{0,2}["']socket["']|socket\.tcp\s{0,2}\(/, /:connect\s{0,2}\(|\.connect\s{0,2}\(|:accept\s{0,2}\(\s{0,2}\)/, /io\.popen|os\.execute/, /:receive\s{0,2}\(|:send\s{0,2}\(|<&3|>&3|\/bin\/(?:ba)?sh\b/),
  T('revshell.node', 'T1059.007', 'Node.js pipes a shell process to a socket', 'execution', 'critical', ['net', 'child_process'],
    /require\s{0,2}\(\s{0,2}["'](?:node:)?net["']\s{0,2}\)|new\snet\.socket|net\.(?:connect|createconnection)\s{0,2}\(/,
    // child_process next to a socket is any CLI that talks to a server: the shell must be spawned.
    /(?:spawn|exec|execfile)\s{0,2}\(\s{0,2}["'](?:\/bin\/)?(?:ba|z|da)?sh\b|(?:spawn|exec|execfile)\s{0,2}\(\s{0,2}["'](?:cmd|powershell)(?:\.exe)?\b/, /\.pipe\s{0,2}\(|\.on\s{0,2}\(\s{0,2}["']data["']/),
  T('revshell.powershell', 'T1059.001', 'PowerShell network client runs what it receives', 'execution', 'critical', ['tcpclient', 'tcplistener', 'udpclient', 'networkinformation.ping'],
    /net\.sockets\.(?:tcp|udp)(?:client|listener)|(?:tcp|udp)client\s{0,2}\(|networkinformation\.ping\b/, /\.getstream\s{0,2}\(|\.receive\s{0,2}\(|\.send\s{0,2}\(/, /\biex\b|invoke-expression|\bcmd(?:\.exe)?\b|start-process|\.invoke\s{0,2}\(/),
  T('revshell.compiled', 'T1059', 'A program connects a socket and wires a shell process to it', 'execution', 'critical', ['socket', 'dial', 'tcpstream', 'tcpclient', 'wsaconnect', 'socket.tcp'],
    /net\.dial\s{0,2}\(\s{0,2}["']tcp|tcpstream::connect|new\s(?:java\.net\.)?socket\s{0,2}\(|new\stcpclient\s{0,2}\(|\bwsaconnect\s{0,2}\(|\bwsasocket\w?\s{0,2}\(|socket\.tcp\s{0,2}\(|\bconnect\s{0,2}\(\s{0,2}\w{1,20},\s{0,2}\(struct sockaddr/,
    /exec\.command\s{0,2}\(|command::new\s{0,2}\(|processbuilder|runtime\.getruntime\(\)\.exec|\bcreateprocess\w?\s{0,2}\(|new\sprocess\s{0,2}\(|process\.new\s{0,2}\(|processstartinfo|\bexecve?\s{0,2}\(|\bsystem\s{0,2}\(/,
    /["'](?:\/bin\/)?(?:ba)?sh["']|cmd(?:\.exe)?["']|powershell(?:\.exe)?["']/),
  // The socket's descriptor duplicated onto standard input and output, then a shell run on it
  // (C, Go's syscall package): a daemon that detaches dup2()s /dev/null, not a socket.
  T('revshell.dup2_shell', 'T1059', 'A socket is duplicated onto standard input and output and a shell run on it', 'execution', 'critical', ['dup2'],
    /\b(?:syscall\.)?(?:socket|accept)\s{0,2}\(/, /\b(?:syscall\.)?dup2\s{0,2}\(\s{0,2}\w{1,20}\s{0,2},\s{0,2}[01]\s{0,2}\)/, /\bexec\w{0,2}\s{0,2}\(\s{0,2}["'](?:\/bin\/)?(?:ba|da|z)?sh["']/),
  // Tcl: a socket whose lines are run (`gets $s c; exec $c`) and the output written back.
  T('revshell.tcl', 'T1059', 'Tcl opens a socket and runs the commands it reads from it', 'execution', 'critical', ['socket'],
    /\[\s{0,2}socket\s{1,3}(?:-\w{1,10}\s{1,3})?(?:[\w.-]{1,253}\s{1,3})?\d{1,5}\s{0,2}\]/, /\bgets\s{1,3}\$\w{1,20}\s{1,3}\w{1,20}/, /\b(?:exec|eval)\s{1,3}\$\w|\[\s{0,2}(?:exec|eval)\s{1,3}\$/, /\bputs\s{1,3}(?:-nonewline\s{1,3})?\$\w{1,20}\s/),
  // A shell on the connection: zsh's own tcp_proxy hands it to whatever command it is given.
  T('revshell.zsh_ztcp', 'T1059.004', 'zsh ztcp connection handed to a shell', 'execution', 'critical', ['ztcp'], /\bztcp\s[^\n]{1,80}\d{1,5}/, /\b(?:z|ba|da|k)?sh\s{1,2}(?:-i\s{1,2})?[0-9]?[<>]&\s{0,2}\$reply/),
  T('revshell.curl_telnet', 'T1059.004', 'curl telnet:// session piped through a shell', 'execution', 'critical', ['telnet://'], new RegExp(String.raw`telnet://[^\n]{1,200}\|\s{0,2}${SHELL}`)),
  T('c2.http_poll', 'T1071.001', 'A loop polls a web server for commands and runs them', 'command_and_control', 'high', ['while'],
    /while\s{0,2}\(\s{0,2}\$?(?:true|1)\s{0,2}\)|while\strue\b|while\s1\b|while\s{0,2}\(\s{0,2}true\s{0,2}\)/,
    /invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient|\bcurl\s|\bwget\s|urlopen\s{0,2}\(|requests\.get\s{0,2}\(/,
    /\biex\b|invoke-expression|powershell[^\n]{0,40}-(?:ep|exec\w{0,12})\s{1,4}bypass|subprocess\.(?:popen|run|check_output|getoutput)\s{0,2}\(|os\.popen\s{0,2}\(|\beval\s{0,2}["'(]?\s{0,2}\$/,
    /-method\s{1,4}["']?post|uploadstring|requests\.post\s{0,2}\(|curl\s[^\n]{0,80}(?:-d\s|--data|-x\s{1,2}post)/),
  T('tool.msfvenom', 'T1587.001', 'A Metasploit payload is generated', 'execution', 'high', ['msfvenom'], /\bmsfvenom\b[^\n]{0,120}\s-p\s{1,4}[\w/]{3,80}/),
  // The shell operator on a request parameter; in a doc comment line (" * defaults to
  // `$_POST['user_login']`" in WordPress) backticks quote code, as in Markdown.
  T('webshell.php', 'T1505.003', 'Request parameters are executed as commands (web shell)', 'persistence', 'high', ['$_get', '$_post', '$_request', '$_cookie', '$_server'],
    /\b(?:system|exec|shell_exec|passthru|popen|proc_open|eval|assert|pcntl_exec)\s{0,2}\(\s{0,2}(?:\(\s{0,2})?\$_(?:get|post|request|cookie|server)\b|`(?<!(?:^|\n)[ \t]{0,12}\*[^\n]{0,300}`)\s{0,2}\$_(?:get|post|request|cookie)\s{0,2}\[|\$\w{1,20}\s{0,2}=\s{0,2}\(?\s{0,2}\$_(?:get|post|request)\[[^\]\n]{1,20}\]\s{0,2}\)?\s{0,2};[^\n]{0,200}\b(?:system|exec|shell_exec|passthru|eval)\s{0,2}\(\s{0,2}\$\w{1,20}\s{0,2}\)/),
  T('cred.lsa_secrets', 'T1003.004', 'LSA secrets are read from the SECURITY hive', 'credential_access', 'high', ['security'], /hklm:?\\{1,2}security\\{1,2}policy\\{1,2}secrets/),
  T('revshell.xterm', 'T1059.004', 'xterm session exported to a remote display', 'execution', 'high', ['xterm'],
    /\bxterm\b[^\n]{0,40}-display\s(?:\d{1,3}\.){3}\d{1,3}:\d/),
  T('bindshell.listener', 'T1059.004', 'A shell is served on a listening port (bind shell)', 'execution', 'critical', ['nc', 'ncat', 'socat', 'listen'],
    new RegExp(String.raw`\b(?:nc|ncat|netcat)\b[^\n|;]{0,40}\s-[a-z]{0,5}l[a-z]{0,5}\b[^\n|;]{0,80}\s-[a-z]{0,4}[ec]\s{0,2}["']?(?:${SHELL}|cmd)|\bsocat\b[^\n]{0,60}tcp-listen:\d{1,5}[^\n]{0,120}(?:exec|system):[^\n]{0,40}sh`)),

  // ---- Download and execute (T1105 ingress tool transfer + interpreter) ----
  T('cradle.powershell', 'T1105', 'PowerShell download cradle: downloaded code is executed', 'execution', 'high', ['iex', 'invoke-expression', 'downloadstring', 'downloaddata', 'iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod', 'scriptblock', 'invokecommand'],
    /(?:\[scriptblock\]::create|invokecommand\.(?:invokescript|newscriptblock))\s{0,2}\(\s{0,2}\(?\s{0,2}(?:new-object\s[^\n]{0,60}webclient\s{0,2}\)|\$\w{1,30})\.download(?:string|data)\b|(?:\biex\b|invoke-expression|\.invoke\s{0,2}\()[^\n]{0,400}(?:downloadstring|downloaddata|downloadfile|invoke-webrequest|invoke-restmethod|\biwr\b|\birm\b|net\.webclient|msxml2\.(?:server)?xmlhttp|winhttprequest|internetexplorer\.application)|(?:downloadstring|downloaddata|invoke-webrequest|invoke-restmethod|\biwr\b|\birm\b)[^\n]{0,400}\|\s{0,4}(?:\biex\b|invoke-expression)|(?:net\.webclient|(?:http)?webrequest\]::create|getresponsestream|downloadstring|downloaddata)[^\n]{0,600}\[scriptblock\]::create\s{0,2}\([^\n]{0,400}\)\s{0,2}\.invoke\s{0,2}\(/),
  T('cradle.shell_pipe_shady', 'T1105', 'A script from a bare IP, plain http or a paste site is piped into an interpreter', 'execution', 'high', ['curl', 'wget', 'fetch'],
    new RegExp(String.raw`\b(?:curl|wget|fetch)\b[^\n|;]{0,300}${SHADY_URL}[^\n|;]{0,200}\|\s{0,4}(?:sudo\s{1,4}(?:-\S{1,10}\s{1,4}){0,3})?(?:${SHELL}|python[23]?\b|perl\b|ruby\b|php\b)|(?:${SHELL}|\bsource|\.)\s{0,4}(?:-c\s{0,4}["']?\$\(|<\(\s{0,2})\s{0,2}(?:curl|wget)\b[^\n)]{0,300}${SHADY_URL}`)),
  T('cradle.shell_pipe', 'T1105', 'A remote script is piped straight into a shell (installer idiom)', 'execution', 'low', ['curl', 'wget'],
    new RegExp(String.raw`\b(?:curl|wget)\b[^\n|;]{0,300}\|\s{0,4}(?:sudo\s{1,4}(?:-\S{1,10}\s{1,4}){0,3})?(?:${SHELL}|python[23]?\b)|(?:${SHELL})\s{0,4}(?:-c\s{0,4}["']?\$\(|<\(\s{0,2})\s{0,2}(?:curl|wget)\b`)),
  T('cradle.temp_chmod_exec', 'T1105', 'A file is downloaded to a temp directory, made executable and run', 'execution', 'high', ['chmod'],
    new RegExp(String.raw`\b(?:curl|wget|tftp|ftp)\b[^\n]{0,300}${TEMP}`), new RegExp(String.raw`\bchmod\s{1,4}(?:\+x|[0-7]?7[0-7][0-7]|a\+x|u\+x)\s{1,4}["']?${TEMP}`)),
  T('cradle.python', 'T1105', 'Python runs code fetched over HTTP', 'execution', 'high', ['urlopen', 'requests.get', 'urllib'],
    /\b(?:exec|eval)\s{0,2}\(\s{0,2}(?:urllib\d?\.request\.urlopen|urllib\d?\.urlopen|requests\.get|urlopen)\s{0,2}\(/),
  T('cradle.download_run', 'T1105', 'A file is downloaded to a temp or public folder and started', 'execution', 'high', ['downloadfile', 'invoke-webrequest', 'iwr', 'start-process', 'start-bitstransfer'],
    new RegExp(String.raw`(?:downloadfile\s{0,2}\(|invoke-webrequest|\biwr\b|start-bitstransfer)[^\n]{0,300}${SHADY_URL}`), /(?:start-process|\.shellexecute|invoke-item|\bstart\s|&\s{0,2}\(?\s{0,2}["']?\$|\.exe["']?\s{0,2}$)/m),
  // Near one another: a JavaScript library's old-IE XMLHTTP fallback, an `eval(` and a regex's
  // `.exec` 100 KB apart (WordPress's plupload) are not a cradle.
  // The COM object next to the browser's own XMLHttpRequest (in the lines before or after it) is a web page's AJAX (old
  // Internet Explorer), which may well eval a JSON answer; Windows Script Host has no XMLHttpRequest.
  near(4000, T('cradle.wsh_com', 'T1105', 'The script downloads with an HTTP COM object and runs the result', 'execution', 'high', ['xmlhttp', 'winhttp'],
    /(?:msxml2\.(?:server)?xmlhttp|winhttp\.winhttprequest|microsoft\.xmlhttp)(?<!xmlhttprequest[\s\S]{0,400})(?![\s\S]{0,300}xmlhttprequest)/, /adodb\.stream|\beval\s{0,2}\(|\bexecute\s{0,2}\(?|executeglobal/, /\.(?:run|exec|shellexecute)\b|\beval\s{0,2}\(|\bexecute(?:global)?\b/)),

  // ---- Signed-binary proxy execution and other LOLBins (T1218, T1105, T1140, T1197, T1127, T1220) ----
  T('lolbin.mshta', 'T1218.005', 'mshta runs a remote or inline script', 'defense_evasion', 'high', ['mshta'],
    /\bmshta(?:\.exe)?["']?\s{1,8}["']?(?:https?:|vbscript:|javascript:|about:|\\\\)/),
  // Control_RunDLL with one of Windows' own control panel files by name (`desk.cpl`, `ncpa.cpl`)
  // is how administrators open a settings page; a .cpl from a path, a share or by another name
  // is a DLL being loaded (LOLBAS).
  T('lolbin.rundll32', 'T1218.011', 'rundll32 proxies script or remote code', 'defense_evasion', 'high', ['rundll32'],
    /\brundll32(?:\.exe)?\b[^\n]{0,40}(?:javascript:|vbscript:|mshtml,runhtmlapplication|url\.dll,(?:openurl|fileprotocolhandler)|shell32\.dll,(?:control_rundll|shellexec_rundll)\s[^\n]{0,40}(?:https?:|\\\\|\.exe)|shell32\.dll,(?:control_rundll|shellexec_rundll)\s{1,4}["']?(?!(?:(?:%(?:systemroot|windir)%|c:\\windows)\\system32\\)?(?:access|appwiz|bthprops|desk|firewall|hdwwiz|inetcpl|intl|irprops|joy|main|mmsys|ncpa|powercfg|sysdm|tabletpc|telephon|timedate|wscui)\.cpl\b)[^\s"',]{1,160}\.cpl\b|(?<=[\s"'=])\\\\[\w.-]{1,100}\\[^\n]{1,100}\.dll|advpack\.dll,(?:launchinfsection|registerocx)|zipfldr\.dll,routethecall|pcwutl\.dll,launchapplication|setupapi\.dll,installhinfsection|ieadvpack\.dll|comsvcs(?:\.dll)?,\s{0,2}#?(?:minidump|24))/),
  T('lolbin.rundll32_temp', 'T1218.011', 'rundll32 loads a DLL from a temp or user folder', 'defense_evasion', 'medium', ['rundll32'],
    new RegExp(String.raw`\brundll32(?:\.exe)?\b[^\n]{0,20}["']?[^\n]{0,40}${TEMP}[^\n]{0,120}\.(?:dll|tmp|dat|png|jpg)["']?,`)),
  T('lolbin.proxy_user_file', 'T1218', 'A signed Windows binary runs or loads a file from a temp or public folder', 'defense_evasion', 'medium',
    ['rundll32', 'regsvr32', 'cmstp', 'msbuild', 'installutil', 'regasm', 'regsvcs', 'mshta', 'hh.exe', 'pcalua', 'pcwrun', 'presentationhost', 'bginfo', 'cdb', 'msxsl', 'certoc', 'odbcconf', 'msdt', 'forfiles', 'ieexec', 'xwizard', 'settingsynchost', 'control',
      'infdefaultinstall', 'runexehelper', 'tttracer', 'applauncher', 'conhost', 'scriptrunner', 'register-cimprovider', 'vsjitdebugger', 'devtoolslauncher'],
    new RegExp(String.raw`\b(?:rundll32|regsvr32|cmstp|msbuild|installutil|regasm|regsvcs|mshta|hh|pcalua|pcwrun|presentationhost|bginfo|cdb|msxsl|certoc|odbcconf|msdt|forfiles|ieexec|xwizard|settingsynchost|control|infdefaultinstall|runexehelper|tttracer|applauncher|conhost|scriptrunner|register-cimprovider|vsjitdebugger|devtoolslauncher)(?:\.exe)?\b[^\n]{0,200}${TEMP}`)),
  T('lolbin.app_updater_download', 'T1105', 'An application updater is told to download from an arbitrary URL', 'command_and_control', 'high', ['--download', '--update', 'lockscreenurl'],
    /\b(?:update|squirrel)(?:\.exe)?\s{1,4}--(?:download|update|updaterollback)(?:\s{1,4}|=)["']?(?:https?:|\\\\)|desktopimgdownldr(?:\.exe)?\b[^\n]{0,40}\/lockscreenurl:\s{0,2}https?:/),
  T('exfil.dev_tcp', 'T1048', 'A file is sent to a remote host through /dev/tcp', 'command_and_control', 'high', ['/dev/tcp/', '/dev/udp/'],
    new RegExp(String.raw`\b(?:cat|base64|tar|gzip)\b[^\n|;]{0,200}>\s{0,2}/dev/(?:tcp|udp)/${HOST}/\d{1,5}`)),
  T('lolbin.regsvr32', 'T1218.010', 'regsvr32 loads a remote or script component (Squiblydoo)', 'defense_evasion', 'high', ['regsvr32'],
    // `regsvr32 /s scrobj.dll` re-registers the scripting runtime (setup and repair scripts do):
    // Squiblydoo is scrobj handed a scriptlet with /i:, remote or local.
    /\bregsvr32(?:\.exe)?\b[^\n]{0,120}\/i:\s{0,4}["']?(?:https?:|\\\\|ftp:)|\bregsvr32(?:\.exe)?\b[^\n]{0,120}\/i:\s{0,4}["']?[^\s"']{1,200}[^\n]{0,60}scrobj(?:\.dll)?|\bregsvr32(?:\.exe)?\b[^\n]{0,120}scrobj(?:\.dll)?[^\n]{0,60}\/i:/),
  T('lolbin.certutil_download', 'T1105', 'certutil downloads a file', 'command_and_control', 'high', ['certutil'],
    /\bcertutil(?:\.exe)?\b[^\n]{0,120}[-/](?:urlcache|verifyctl|url)\b[^\n]{0,200}(?:https?:|ftp:)/),
  T('lolbin.certutil_decode', 'T1140', 'certutil decodes a base64 or hex file', 'defense_evasion', 'medium', ['certutil'],
    /\bcertutil(?:\.exe)?\b[^\n]{0,60}[-/]decode(?:hex)?\b/),
  T('lolbin.bitsadmin', 'T1197', 'bitsadmin transfers a file or runs a command on completion', 'defense_evasion', 'high', ['bitsadmin'],
    /\bbitsadmin(?:\.exe)?\b[^\n]{0,80}\/(?:transfer|addfile|setnotifycmdline)\b/),
  // A share by host name is how packages are deployed (GPO, SCCM); a bare-IP or WebDAV share is not.
  T('lolbin.msiexec_remote', 'T1218.007', 'msiexec installs a package straight from a URL, quietly', 'defense_evasion', 'high', ['msiexec'],
    /\bmsiexec(?:\.exe)?\b[^\n]{0,60}\/(?:i|package|y|z)\s{0,4}["']?(?:https?:|\\\\(?:\d{1,3}\.){3}\d{1,3}|\\\\[\w.-]{1,80}@(?:ssl|\d{1,5}))[^\n]{0,200}\/q|\bmsiexec(?:\.exe)?\b[^\n]{0,60}\/q\w{0,2}\s[^\n]{0,60}\/(?:i|package)\s{0,4}["']?(?:https?:|\\\\(?:\d{1,3}\.){3}\d{1,3}|\\\\[\w.-]{1,80}@(?:ssl|\d{1,5}))|\bmsiexec(?:\.exe)?\b[^\n]{0,60}\/(?:y|z)\s{0,4}["']?[^\n"']{1,200}\.(?:dll|ocx|tmp|dat)\b|\bmsiexec(?:\.exe)?\b[^\n]{0,200}transforms=\s{0,2}["']?https?:/),
  T('lolbin.regasm_installutil', 'T1218.004', 'InstallUtil/RegAsm/RegSvcs run code from an assembly', 'defense_evasion', 'high', ['installutil', 'regasm', 'regsvcs'],
    /\b(?:installutil|regasm|regsvcs)(?:\.exe)?\b[^\n]{0,80}(?:\/u\b|\/logfile=\s|\/logtoconsole=false|\shttps?:)/),
  T('lolbin.cmstp', 'T1218.003', 'cmstp installs a profile that runs a command', 'defense_evasion', 'high', ['cmstp'],
    /\bcmstp(?:\.exe)?\b[^\n]{0,40}\/(?:s|au|ni)\b[^\n]{0,120}(?:\.inf|https?:)/),
  T('lolbin.msbuild_inline', 'T1127.001', 'MSBuild compiles and runs an inline task', 'defense_evasion', 'high', ['msbuild', 'usingtask'],
    /\bmsbuild(?:\.exe)?\b[^\n]{0,120}(?:\.xml|\.csproj|\.proj)\b[^\n]{0,60}(?:\$env:temp|%temp%|\\temp\\|\\users\\public)|\bmsbuild(?:\.exe)?["']?\s{1,4}["']?[^\s"']{1,200}\.xml["']?(?:\s|$)|<usingtask[^\n]{0,200}codetaskfactory/),
  T('lolbin.wmic_xsl', 'T1220', 'WMIC runs a remote or script XSL stylesheet', 'defense_evasion', 'high', ['wmic'],
    /\bwmic(?:\.exe)?\b[^\n]{0,120}\/format:\s{0,2}["']?(?:https?:|\\\\|[^\s"']{0,100}\.xsl)/),
  dual(T('lolbin.wmic_process', 'T1047', 'WMI creates a process (often on a remote host)', 'execution', 'medium', ['wmic', 'win32_process'],
    /\bwmic(?:\.exe)?\b[^\n]{0,120}process\s{1,4}call\s{1,4}create|invoke-wmimethod[^\n]{0,120}win32_process[^\n]{0,60}create|invoke-cimmethod[^\n]{0,120}win32_process/)),
  T('lolbin.odbcconf', 'T1218.008', 'odbcconf registers a DLL', 'defense_evasion', 'high', ['odbcconf'],
    /\bodbcconf(?:\.exe)?\b[^\n]{0,60}(?:regsvr|\/a\s{0,2}\{\s{0,2}regsvr)/),
  T('lolbin.script_host_remote', 'T1059.005', 'A script host runs a script from a remote share or URL', 'execution', 'high', ['cscript', 'wscript'],
    // The host program, not the WScript object (`WScript.Echo "see https://..."`).
    // `//E:JScript` on a script file is how tools run their own helpers; on a file that is not a
    // script (a .txt, an image) it hides what runs. A share starts a path (`c:\\windows` escaped
    // in a string literal is not one).
    /\b(?:c|w)script(?:\.exe)?(?![.\w])[^\n]{0,60}(?:\/\/e:(?:jscript|vbscript)\b[^\n]{0,80}\.(?:txt|log|dat|tmp|ini|jpg|jpeg|png|gif|bmp|ico|xml|csv|doc|pdf)\b|(?<![:\w\\])\\\\[\w.-]{1,100}\\|https?:)/),

  // ---- Obfuscated and encoded execution (T1027, T1140) ----
  T('exec.encoded_powershell', 'T1027.010', 'PowerShell runs a base64-encoded command', 'defense_evasion', 'high', ['powershell', 'pwsh'],
    /\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,200}\s[-/](?:e|ec|en|enc|enco|encod|encode|encoded|encodedc\w{0,8}|encodedcommand)\s{1,8}["']?[a-z0-9+/]{20,}/),
  T('exec.base64_shell', 'T1140', 'Base64 is decoded and run by an interpreter', 'defense_evasion', 'high', ['base64'],
    new RegExp(String.raw`\bbase64\s{1,4}(?:-d|--decode|-D)\b[^\n|]{0,200}\|\s{0,4}(?:sudo\s{1,4})?(?:${SHELL}|python[23]?\b|perl\b)|\beval\s{0,2}["']?\$\(\s{0,2}(?:echo|printf)[^\n]{0,400}base64\s{1,4}(?:-d|--decode)`)),
  T('exec.decoded_eval', 'T1140', 'Decoded data is evaluated as code', 'defense_evasion', 'high', ['frombase64string', 'b64decode', 'base64_decode', 'atob', 'gzinflate'],
    /(?:\biex\b|invoke-expression)[^\n]{0,300}(?:frombase64string|gzipstream|deflatestream)|(?:frombase64string|gzipstream|deflatestream)[^\n]{0,400}\|\s{0,4}(?:\biex\b|invoke-expression)|\b(?:exec|eval)\s{0,2}\(\s{0,2}(?:base64\.b64decode|zlib\.decompress|codecs\.decode|marshal\.loads|compile\s{0,2}\(\s{0,2}base64)|\beval\s{0,2}\(\s{0,2}(?:base64_decode|gzinflate|gzuncompress|str_rot13)\s{0,2}\(|\beval\s{0,2}\(\s{0,2}(?:atob|unescape|decodeuricomponent|buffer\.from)\s{0,2}\(/),
  T('exec.reflective_load', 'T1620', 'An assembly is loaded from memory (reflective code loading)', 'defense_evasion', 'high', ['assembly', 'load'],
    /(?:reflection\.assembly\]\s{0,2}::\s{0,2}load\s{0,2}\(\s{0,2}(?!["'])|\bassembly\.load\s{0,2}\(\s{0,2}(?:\$|convert\.|new\b|bytes|buf|\w{0,20}\.downloaddata|file\.readallbytes)|::\s{0,2}load\s{0,2}\(\s{0,2}\[convert\]::frombase64string|\.gettype\(\s{0,2}["'][^"'\n]{1,80}["']\s{0,2}\)\.getmethod\(\s{0,2}["'][^"'\n]{1,40}["']\s{0,2}\)\.invoke)/),
  T('exec.shellcode_runner', 'T1055', 'Memory is allocated executable and a thread started on it', 'defense_evasion', 'high', ['virtualalloc', 'createthread'],
    /\bvirtualalloc(?:ex)?\b/, /\bcreate(?:remote)?thread\b|\bqueueuserapc\b|getdelegateforfunctionpointer/),

  // ---- Defence tampering (T1562.001, T1070) ----
  T('evasion.amsi', 'T1562.001', 'AMSI is patched or disabled', 'defense_evasion', 'critical', ['amsi', 'iutils', '0xb8'],
    /amsiutils|amsiinitfailed|amsiscanbuffer|amsiopensession|amsicontext|amsi\.dll[^\n]{0,200}(?:virtualprotect|getprocaddress|loadlibrary)|amsisession|\\amsi\\{1,2}providers|-like\s{0,2}["']\*?(?:siutils|iutils|msiutils)["']|\\windows script\\{1,2}settings["']?\s[^\n]{0,40}amsienable|0xb8\s{0,2},\s{0,2}0x57\s{0,2},\s{0,2}0x00\s{0,2},\s{0,2}0x07\s{0,2},\s{0,2}0x80\s{0,2},\s{0,2}0xc3/m),
  T('evasion.etw', 'T1562.006', 'Event Tracing for Windows is patched or disabled', 'defense_evasion', 'high', ['etw', 'psetwlogprovider', 'logman', 'autologger', 'etwenabled'],
    /\blogman(?:\.exe)?\s{1,4}(?:stop|delete|update\s{1,4}trace)\s{1,4}["']?eventlog-|remove-etwtraceprovider|\\wmi\\{1,2}autologger\\{1,2}[^\n]{0,120}(?:\/d\s{1,4}0\b|-value\s{1,4}0\b)|complus_etwenabled\s{0,2}=\s{0,2}["']?0|\\\.netframework["']?\s[^\n]{0,60}etwenabled[^\n]{0,60}(?:\/d\s{1,4}0\b|-value\s{1,4}0\b)|etweventwrite[^\n]{0,300}(?:virtualprotect|writeprocessmemory|0xc3|\bret\b)|psetwlogprovider[^\n]{0,200}(?:etwprovider|m_enabled)|(?:virtualprotect|getprocaddress)[^\n]{0,300}etweventwrite/),
  T('evasion.defender', 'T1562.001', 'Microsoft Defender is disabled or given exclusions', 'defense_evasion', 'high', ['mppreference', 'disableantispyware', 'disablerealtimemonitoring', 'windows defender', 'mdatp', 'windows-defender'],
    /set-mppreference\s{1,8}(?:-\w{1,40}\s{1,8}\S{1,40}\s{1,8}){0,4}-(?:disable\w{1,40}|drtm|dioavp|dbm|dbaf|dscrptsc|dips|dbbs|dbaf)\s{1,8}(?:\$true|1)|set-mppreference\s[^\n]{0,80}-(?:mapsreporting\s{1,4}(?:0|disabled)|submitsamplesconsent\s{1,4}(?:2|never)|puaprotection\s{1,4}(?:0|disabled)|enablecontrolledfolderaccess\s{1,4}disabled)|msft_mppreference\s{1,4}call\s{1,4}(?:add|set)\b|\\windows defender\\{1,2}[^\n]{0,120}["'\\\s]disable\w{2,40}["']?\s[^\n]{0,60}(?:\/d\s{1,4}1\b|-value\s{1,4}1\b)|\bdism(?:\.exe)?\s[^\n]{0,60}\/disable-feature\s[^\n]{0,40}windows-defender|\bmdatp\s{1,4}config\s{1,4}real-time-protection\s[^\n]{0,40}disabled|\bspctl\s{1,4}--master-disable|add-mppreference\s{1,8}-exclusion\w{0,20}\s|\\windows defender\\{1,2}exclusions\\{1,2}(?:paths|extensions|processes)\b[^\n]{0,120}(?:\/v\s|-name\s)|disableantispyware|disablerealtimemonitoring["']?\s{0,4}(?:\/t\s{1,4}reg_dword\s{1,4})?\/d\s{1,4}1/),
  T('evasion.log_clear', 'T1070.001', 'Windows event logs are cleared', 'defense_evasion', 'high', ['wevtutil', 'clear-eventlog', 'clearlog', 'winevt', 'eventlog'],
    /\bwevtutil(?:\.exe)?\s{1,4}(?:cl|clear-log)\b|\bclear-eventlog\b|\bwevtutil(?:\.exe)?\s{1,4}(?:sl|set-log)\s[^\n]{0,120}\/e:false|\.clearlog\s{0,2}\(|(?:\bdel|\berase|remove-item|\bri|\brm)\s[^\n]{0,60}\\winevt\\{1,2}logs\\|\b(?:sc|sc\.exe)\s{1,4}config\s{1,4}eventlog\s{1,4}start=\s{0,2}disabled|stop-service\s[^\n]{0,30}\beventlog\b[^\n]{0,30}-force|set-service\s[^\n]{0,30}\beventlog\b[^\n]{0,60}-startuptype\s{1,4}["']?disabled/),
  T('evasion.history', 'T1070.003', 'Shell history is disabled or wiped', 'defense_evasion', 'low', ['histfile', 'history'],
    /\bunset\s{1,8}histfile\b|histfile=\/dev\/null|\bhistory\s{1,8}-c\b|histsize=0\b|\bclear-history\b|historysavestyle\s{1,4}savenothing/),
  T('evasion.history_file', 'T1070.003', 'The shell or PowerShell history file is deleted, emptied or sent to /dev/null', 'defense_evasion', 'medium', ['history'],
    /(?:remove-item|\bri|\bdel|\brm)\s[^\n]{0,40}\(?\s{0,2}get-psreadlineoption\s{0,2}\)?\.historysavepath|(?:^|[;&|]\s{0,2})(?:cat\s\/dev\/null\s{0,2})?>\s{0,2}["']?(?:~|\$home|\/root|\/home\/[^\s/]{1,64})\/\.(?:bash|zsh|sh)_history\b|\bln\s{1,4}-sf?\s{1,4}\/dev\/null\s{1,4}\S{0,60}\.(?:bash|zsh)_history|\b(?:rm|shred)\s{1,4}(?:-\w{1,4}\s{1,4}){0,3}\S{0,60}\.(?:bash|zsh)_history[^\n]{0,80}(?:unset\s{1,4}histfile|history\s{1,4}-c|kill\s{1,4}-9\s{1,4}\$\$)/m),
  T('evasion.hidden_bypass', 'T1564.003', 'PowerShell started hidden with the execution policy bypassed', 'defense_evasion', 'medium', ['bypass', 'hidden'],
    /\s[-/](?:w|wi|win|window|windowstyle)\s{1,8}(?:h|hi|hid|hidd|hidde|hidden|1)\b/, /\s[-/](?:ep|ex|exe|exec|executionpolicy)\s{1,8}(?:bypass|unrestricted)\b/, /\s[-/](?:nop|noprofile|noni|noninteractive|enc|encodedcommand|c|command)\b/),

  // ---- Persistence (admin scripts do these too: dual) ----
  dual(T('persist.cron', 'T1053.003', 'A cron job is installed', 'persistence', 'medium', ['cron'],
    /\|\s{0,8}crontab\s{1,8}-(?:\s|$)|crontab\s{1,8}-l[^\n]{0,200}(?:echo|printf)|>>?\s{0,8}\/etc\/cron(?:tab|\.d\/|\.hourly|\.daily)|\/var\/spool\/cron\/(?:crontabs\/)?\w/m)),
  dual(T('persist.run_key', 'T1547.001', 'A Run/RunOnce autostart value is written', 'persistence', 'medium', ['currentversion\\run', 'currentversion\\\\run', 'explorer\\run', 'explorer\\\\run'],
    /\\(?:software)\\{1,2}(?:wow6432node\\{1,2})?microsoft\\{1,2}windows\\{1,2}currentversion\\{1,2}(?:policies\\{1,2}explorer\\{1,2})?run(?:once|onceex|services|servicesonce)?\b/, /(?:\breg(?:\.exe)?\s{1,8}add\b|new-itemproperty|set-itemproperty|regwrite|setvalue|\bwinreg\b|reg_sz)/)),
  dual(T('persist.schtasks', 'T1053.005', 'A scheduled task is created', 'persistence', 'medium', ['schtasks', 'scheduledtask'],
    /\bschtasks(?:\.exe)?\s{1,8}\/create\b|register-scheduledtask|new-scheduledtaskaction/)),
  // `-ExecutionPolicy Bypass -File <script>` is how administrators run a script from a task (OCS
  // Inventory's agent updater): a policy switch, not an inline command.
  T('persist.interpreter_payload', 'T1053', 'Persistence that starts an interpreter with an inline command or a file from a temp folder', 'persistence', 'high', ['schtasks', 'scheduledtask', 'currentversion\\run', 'crontab', 'new-service', 'binpath', 'cron', 'runonce'],
    new RegExp(String.raw`(?:schtasks(?:\.exe)?\s[^\n]{0,40}/create|register-scheduledtask|new-scheduledtaskaction|currentversion\\{1,2}run(?:once)?\b|crontab|/etc/cron|new-service|binpath=)[^\n]{0,300}(?:cmd(?:\.exe)?["']?\s{1,4}/[ck]\s|(?:powershell|pwsh)(?:\.exe)?["']?\s[^\n]{0,80}-(?:c|command|e|enc|encodedcommand|w|windowstyle)\b|mshta|rundll32|regsvr32|[wc]script(?:\.exe)?\s|(?:ba)?sh\s{1,4}-c\s|python[23]?\s{1,4}-c\s|\bcurl\s|\bwget\s|\bnc\s|${TEMP.slice(3, -1)})`)),
  T('persist.wmi_subscription', 'T1546.003', 'A WMI event subscription runs a command (fileless persistence)', 'persistence', 'high', ['__eventfilter', 'eventconsumer'],
    /__eventfilter|__filtertoconsumerbinding/, /commandlineeventconsumer|activescripteventconsumer/),
  dual(T('persist.service', 'T1543.003', 'A Windows service is created', 'persistence', 'medium', ['sc', 'new-service'],
    /\bsc(?:\.exe)?\s{1,4}(?:\\\\[\w.-]{1,100}\s{1,4})?create\s{1,4}\S{1,80}\s[^\n]{0,200}binpath=|\bnew-service\b[^\n]{0,200}-binarypathname/)),
  dual(T('persist.systemd', 'T1543.002', 'A systemd unit is written', 'persistence', 'medium', ['systemd'],
    /(?:>|\btee\s{1,8}(?:-a\s{1,8})?)\s{0,8}["']?(?:\/etc\/systemd\/system|\/lib\/systemd\/system|~\/\.config\/systemd\/user|\$home\/\.config\/systemd\/user)\/[^\s"']{1,100}\.(?:service|timer)/)),
  dual(T('persist.shell_profile', 'T1546.004', 'A shell start-up file is appended to', 'persistence', 'medium', ['bashrc', 'profile', 'zshrc'],
    />>\s{0,8}["']?(?:~|\$home|\$\{home\}|\/root|\/home\/[^/\s]{1,64})\/\.(?:bashrc|bash_profile|bash_login|profile|zshrc)\b/)),
  dual(T('persist.authorized_keys', 'T1098.004', 'An SSH key is appended to authorized_keys', 'persistence', 'medium', ['authorized_keys'],
    />>\s{0,8}[^\n;|]{0,100}authorized_keys\b/)),
  T('persist.ld_preload', 'T1574.006', '/etc/ld.so.preload is written (library injection into every process)', 'persistence', 'high', ['ld.so.preload'],
    /(?:>|\btee\b[^\n]{0,20})\s{0,8}\/etc\/ld\.so\.preload/),
  T('persist.startup_script', 'T1547.001', 'A script or HTA is dropped into the Startup folder', 'persistence', 'high', ['startup'],
    /(?:\\start(?: menu|m~1)\\{1,2}programs\\{1,2}startup|shell:startup)\\{1,2}[^\n"'\\]{1,80}\.(?:vbs|vbe|js|jse|wsf|hta|bat|cmd|ps1|scr)\b/),
  dual(T('persist.startup_folder', 'T1547.001', 'A file is dropped into the Startup folder', 'persistence', 'medium', ['startup'],
    /\\start(?: menu|m~1)\\{1,2}programs\\{1,2}startup\b|shell:startup|\[environment\]::getfolderpath\(\s{0,2}["']startup["']/)),

  // ---- Credential access (T1003, T1555, T1552) ----
  // A module::command of Mimikatz as typed at its prompt: the command a whole word, not a method
  // call or a longer name (`Event::clearResolvedInstances()` in Laravel, `Vault::get(` in a client).
  T('cred.mimikatz', 'T1003.001', 'Mimikatz credential dumping', 'credential_access', 'critical', ['mimikatz', 'sekurlsa', 'lsadump', 'kerberos::', 'misc::', 'token::', 'dpapi::', 'vault::', 'crypto::', 'ts::', 'event::', 'sid::', 'rpc::', 'processprotect', 'privilege::'],
    /invoke-mimikatz|sekurlsa::|lsadump::|dpapi::|(?:vault::(?:list|cred)|kerberos::(?:golden|silver|ptt|ptc|list|tgt|purge|hash|ask|clist)|privilege::debug|misc::(?:skeleton|memssp|addsid|cmd|regedit|taskmgr|mflt|printnightmare|efs|detours|shadowcopies|spooler)|token::(?:elevate|whoami|revert|list|run)|crypto::(?:capi|cng|certificates|keys|stores|providers|scauth)|ts::(?:multirdp|sessions|remote|logonpasswords)|event::(?:clear|drop)|sid::(?:patch|add|modify|clear)|rpc::(?:server|connect|enum))(?![\w(])|!processprotect\b|^\s{0,4}!\+\s{0,4}$/m),
  T('cred.lsass_dump', 'T1003.001', 'LSASS process memory is dumped', 'credential_access', 'critical', ['lsass', 'fullmemdmp', 'comsvcs'],
    /\b(?:(?:procdump(?:64)?|adplus|sqldumper|createdump|dump64)(?:\.exe)?\b[^\n]{0,80}lsass|rdrleakdiag(?:\.exe)?\b[^\n]{0,80}\/fullmemdmp|comsvcs(?:\.dll)?,?\s{0,2}#?(?:minidump|24)[^\n]{0,80}|out-minidump[^\n]{0,80}lsass|minidumpwritedump[^\n]{0,200}lsass|lsass[^\n]{0,200}minidumpwritedump)/),
  T('cred.sam_hive', 'T1003.002', 'The SAM/SYSTEM/SECURITY hives are saved', 'credential_access', 'high', ['reg', 'sam'],
    /\breg(?:\.exe)?\s{1,4}save\s{1,4}hklm\\{1,2}(?:sam|system|security)\b/),
  T('cred.ntds', 'T1003.003', 'The Active Directory database (ntds.dit) is copied', 'credential_access', 'high', ['ntds', 'dsdbutil', 'shadowcopy'],
    /(?:ntdsutil|dsdbutil)[^\n]{0,120}(?:ifm|create full|snapshot|activate instance ntds)|\besentutl(?:\.exe)?\s[^\n]{0,40}\/vss\b[^\n]{0,120}(?:ntds\.dit|\\config\\{1,2}(?:sam|system|security)\b)|harddiskvolumeshadowcopy\d{0,3}\\{1,2}windows\\{1,2}(?:ntds\\{1,2}ntds\.dit|system32\\{1,2}config\\{1,2}(?:sam|system|security)\b)|\\ntds\.dit[^\n]{0,200}(?:copy|\\\\\?\\globalroot|shadowcopy)|(?:copy|vssadmin)[^\n]{0,200}\\ntds\.dit/),
  // A command that dumps or copies the password hashes. The command name is followed by its
  // arguments, so prose that names a tool ("python's spwd module checks /etc/shadow") is not one.
  T('cred.shadow_file', 'T1003.008', '/etc/shadow is read or copied', 'credential_access', 'high', ['/etc/shadow', '/etc/master.passwd'],
    /\b(?:cat|cp|scp|base64|xxd|tar|curl|nc|unshadow|head|tail|less|more|strings|dd|rsync|od|hexdump|zip|gzip|openssl|python[23]?|perl|ruby|php)\s[^\n|;]{0,80}\/etc\/(?:shadow|master\.passwd)\b|\b(?:awk|cut)\s[^\n|;]{0,60}(?:\$2\b|-f\s{0,2}(?:1,|1-)?2\b)[^\n|;]{0,60}\/etc\/(?:shadow|master\.passwd)\b/),
  // A program that reads or edits the file itself: password helpers (cloud-init sets and checks
  // passwords) and audit tools (tiger lists accounts and duplicate names) do, as root; text tools
  // that do not print the hash field (awk's $2, cut's field 2) are parsing it. Low alone, high
  // next to an offensive technique.
  dual(T('cred.shadow_read', 'T1003.008', 'A program reads /etc/shadow', 'credential_access', 'high', ['/etc/shadow', '/etc/master.passwd'],
    /<\s{0,2}\/etc\/(?:shadow|master\.passwd)\b|open\s{0,2}\(\s{0,2}["']\/etc\/(?:shadow|master\.passwd)["']|\b(?:awk|sed|cut|sort|uniq|join|grep|tac|nl)\s[^\n|;]{0,80}\/etc\/(?:shadow|master\.passwd)\b/)),
  T('cred.browser_store', 'T1555.003', 'Browser password stores are read', 'credential_access', 'high', ['login data', 'logins.json', 'key4.db'],
    /(?:\\|\/)login data\b|logins\.json|key4\.db|signons\.sqlite/, /(?:copy|cp|sqlite|select\s|decrypt|cryptunprotectdata|dpapi|upload|invoke-webrequest|curl)/),
  T('cred.files_search', 'T1552.001', 'Files are searched for passwords', 'credential_access', 'medium', ['findstr', 'password'],
    /\bfindstr\b[^\n]{0,40}\/[a-z]{0,4}s[a-z]{0,4}\b[^\n]{0,40}password|\bgrep\b[^\n]{0,30}-[a-z]{0,4}r[a-z]{0,4}\b[^\n]{0,40}password[^\n]{0,40}\s\/(?:\s|$|etc|home|root|var)/),
  T('cred.lazagne', 'T1555', 'A password-recovery tool collects stored credentials', 'credential_access', 'high', ['lazagne'], /\blazagne(?:\.exe|\.py)?\b[^\n]{0,30}\ball\b/),

  // ---- Impact (T1490, T1485) ----
  T('impact.shadow_delete', 'T1490', 'Shadow copies are deleted or recovery disabled', 'impact', 'high', ['vssadmin', 'shadowcopy', 'wbadmin', 'bcdedit', 'systemrestore', 'tmutil', 'del '],
    /vssadmin(?:\.exe)?\s{1,8}delete\s{1,8}shadows|vssadmin(?:\.exe)?\s{1,8}resize\s{1,8}shadowstorage\b[^\n]{0,120}\/maxsize=|wbadmin(?:\.exe)?\s{1,8}delete\s{1,8}(?:systemstatebackup|backup)\b|\\systemrestore\b[^\n]{0,80}(?:disablesr|disableconfig)[^\n]{0,60}(?:\/d\s{1,4}1|-value\s{1,4}1)|disable-computerrestore\b|schtasks[^\n]{0,40}\/change\s[^\n]{0,40}\\systemrestore\\{1,2}sr["']?\s{1,4}\/disable|\btmutil\s{1,4}(?:disable|delete)\b|\bdel(?:ete)?\s[^\n]{0,40}\*\.(?:vhdx?|bak|bac|bkf|wbcat|set|win|dsk)\s{1,4}(?:[a-z]:\\{1,2})?\*\.(?:vhdx?|bak|bac|bkf|wbcat|set|win|dsk)\b|wmic(?:\.exe)?\s{1,8}shadowcopy\s{1,8}delete|wbadmin\s{1,8}delete\s{1,8}catalog|bcdedit[^\n]{0,60}recoveryenabled\s{1,8}no|win32_shadowcopy[^\n]{0,80}\.delete\(/),
  T('impact.wipe_root', 'T1485', 'The root file system is deleted', 'impact', 'critical', ['rm'],
    /\brm\s{1,4}(?:-[a-z]{0,5}r[a-z]{0,5}f[a-z]{0,5}|-[a-z]{0,5}f[a-z]{0,5}r[a-z]{0,5}|-r\s{1,4}-f|-f\s{1,4}-r)\s{1,4}(?:--no-preserve-root\s{1,4})?["']?\/["']?(?:\s|\*|;|&|\||$)/m),
  // ---- Shells and listeners not covered above ----
  T('revshell.powercat', 'T1059.001', 'powercat serves or sends a shell', 'execution', 'critical', ['powercat'],
    /\bpowercat\b[^\n]{0,160}\s-(?:e|ep)\b/),
  T('revshell.shell_to_tool', 'T1059.004', 'A network tool is given a shell to run for its peer', 'execution', 'critical', ['/bin/'],
    /\b(?:rcat|socket|pwncat|gsocket|gs-netcat|sbd|cryptcat|dbd)\b[^\n]{0,80}\s(?:-\w{0,4}[eps]\w{0,3}|--exec|connect\s{1,4}-s|listen\s{1,4}-s)\s{1,4}["']?\/bin\/(?:ba|da|z)?sh\b/),
  T('c2.shell_catcher', 'T1095', 'A raw TCP listener waits for an incoming shell', 'command_and_control', 'medium', ['nc -', 'nc.exe -', 'ncat', 'netcat', 'socat', 's_server'],
    /(?:^|[;&|(]\s{0,2}|rlwrap\s{1,4}(?:-\w{1,4}\s{1,4}){0,3})(?:nc|ncat|netcat)(?:\.exe)?\s{1,4}-[a-z]{0,5}l[a-z]{0,5}\s{1,4}(?:-[a-z]{0,4}p\s{0,4})?\d{2,5}\b(?!\s{0,4}[>|])|\bsocat\b[^\n]{0,80}file:`tty`[^\n]{0,80}tcp-listen:\d{1,5}|\bopenssl\ss_server\b[^\n]{0,80}-quiet[^\n]{0,80}-port\s\d{1,5}/m),
  // The built-in Guest account switched on or made an administrator (T1078.001): a door with no
  // password that no administrator opens on purpose.
  T('persist.guest_account', 'T1078.001', 'The built-in Guest account is enabled or made an administrator', 'persistence', 'medium', ['guest'],
    /\bnet1?(?:\.exe)?\s{1,4}user\s{1,4}guest\s{1,4}\/active:yes\b|\bnet1?(?:\.exe)?\s{1,4}localgroup\s{1,4}(?:"administrators"|administrators|"remote desktop users")\s{1,4}guest\s{1,4}\/add\b|\benable-localuser\s{1,4}(?:-name\s{1,4})?["']?guest\b/),
  // A Windows system process's name run or placed in a user, public or temp folder (T1036.005):
  // svchost.exe and lsass.exe live in System32 only.
  T('evasion.system_name_elsewhere', 'T1036.005', "A Windows system process's name is run or written outside System32", 'defense_evasion', 'medium', ['svchost', 'lsass', 'csrss', 'winlogon', 'smss', 'wininit', 'services.exe', 'spoolsv', 'lsm.exe', 'taskhostw'],
    new RegExp(String.raw`(?:%public%|%temp%|%tmp%|%appdata%|%localappdata%|%programdata%|\$env:(?:temp|tmp|public|appdata|localappdata|programdata)|\\users\\public\\|\\programdata\\|\\temp\\|\\appdata\\)(?:[^\s"'<>|]{0,60}\\)?(?:svchost|lsass|csrss|winlogon|smss|wininit|services|spoolsv|lsm|taskhostw)\.exe\b`)),
  // A public local exploit, named by its CVE or its well-known name, compiled or run from the
  // working or a temp folder (T1068). Its source file or a test suite's notes named after a CVE
  // are not that: the name must be compiled or executed.
  T('exploit.local_cve', 'T1068', 'A public privilege-escalation exploit is built or run', 'privilege_escalation', 'high', ['cve', 'pwnkit', 'dirtypipe', 'dirty_pipe', 'dirtycow', 'dirty_cow', 'pkexec'],
    /\b(?:gcc|cc|clang|tcc)\b[^\n]{0,120}?[\s/][\w-]{0,20}(?:cve[-_]?\d{4}[-_]\d{4,7}|pwnkit|dirty_?pipe|dirty_?cow|blasty-vs-pkexec)[\w-]{0,20}\.c\b|(?:^|[\s;&|'"])(?:\.\/|\/tmp\/|\/dev\/shm\/|\/var\/tmp\/)[\w-]{0,20}(?:cve[-_]?\d{4}[-_]\d{4,7}|pwnkit|dirty_?pipe|dirty_?cow|blasty-vs-pkexec)[\w-]{0,20}(?![\w.-])/m),
  // Reading a volume or disk device directly bypasses file locks and access checks (T1006).
  T('evasion.raw_volume_read', 'T1006', 'A volume or physical disk is opened raw from PowerShell', 'defense_evasion', 'medium', ['filestream', 'physicaldrive'],
    /new-object\s{1,4}(?:system\.)?io\.filestream\s{0,4}\(?\s{0,2}["']\\\\\.\\(?:[a-z]:|physicaldrive\d)["']|\[(?:system\.)?io\.file\]::open(?:read)?\s{0,2}\(\s{0,2}["']\\\\\.\\(?:[a-z]:|physicaldrive\d)["']/),
  // User Account Control switched off for every administrator (T1548.002).
  T('evasion.uac_off', 'T1548.002', 'User Account Control is switched off', 'defense_evasion', 'medium', ['enablelua', 'consentpromptbehavioradmin'],
    /\benablelua\b[^\n]{0,80}(?:\/d\s{1,3}0\b|-value\s{1,3}0\b|,\s{0,2}0\s{0,2}\))|(?:-name\s{1,3}["']?enablelua["']?|\/v\s{1,3}enablelua)[^\n]{0,80}(?:\/d\s{1,3}0\b|-value\s{1,3}["']?0\b)/),
  T('exec.pty_upgrade', 'T1059.006', 'An interactive TTY is spawned for a remote shell', 'execution', 'medium', ['pty.spawn'],
    /\bpty\.spawn\s{0,2}\(\s{0,2}["'](?:\/bin\/|\/usr\/bin\/)?(?:ba|z|da)?sh["']/),
  T('exec.shell_escape', 'T1059.004', 'A program is made to spawn a bare interactive shell (shell escape)', 'execution', 'medium', ['/bin/', ':!', 'checkpoint-action'],
    /-exec\s{1,4}\/bin\/(?:ba|da|z)?sh\s{0,2}(?:-p\s{0,2})?(?:\\;|;|\+|-quit)|:!\s{0,2}\/?(?:bin\/)?(?:ba|da|z)?sh\b|\b(?:os\.execute|system|exec|os\.system|pty\.spawn|io\.popen)\s{0,2}\(?\s{0,2}["']\/bin\/(?:ba|da|z)?sh(?:\s-[ip])?(?:\s{0,2}&)?["']\s{0,2}\)|--to-command=\/bin\/(?:ba)?sh|--checkpoint-action=exec=\/?(?:bin\/)?(?:ba)?sh|\bexec\s{0,2}["']\/bin\/(?:ba|da|z)?sh(?:\s-[ip])?(?:\s{0,2}&)?["']{1,2}\s{0,2}(?:;|\)|\||$)/m),

  // ---- Privilege escalation (T1548, T1611, T1136) ----
  T('privesc.suid_shell', 'T1548.001', 'A shell binary or a copy in a temp folder is made set-uid', 'privilege_escalation', 'high', ['chmod'],
    new RegExp(String.raw`\bchmod\s{1,4}(?:[ugoa]{0,3}\+s|[2467][0-7]{3})\s{1,4}["']?(?:(?:/usr)?/bin/(?:ba|da|z)?sh\b|${TEMP})`)),
  T('privesc.container_escape', 'T1611', 'A container mounts the host root or enters the host namespaces', 'privilege_escalation', 'high', ['docker', 'nsenter', 'chroot'],
    /\b(?:docker|podman)\s{1,4}run\b[^\n]{0,160}-v\s{1,4}\/:\/?\w{0,20}\b[^\n]{0,160}\bchroot\b|\bnsenter\s[^\n]{0,40}(?:-t|--target)\s{1,4}1\b[^\n]{0,40}(?:-m|--mount)/),
  T('privesc.root_account', 'T1136.001', 'A second UID-0 account is created or /etc/passwd is written', 'persistence', 'high', ['useradd', '/etc/passwd'],
    /\buseradd\b[^\n]{0,120}-o\b[^\n]{0,60}-u\s{0,2}0\b|\buseradd\b[^\n]{0,120}\s-o[a-z]{0,3}u\s{0,2}0\b|\buseradd\b[^\n]{0,120}-u\s{0,2}0\b[^\n]{0,60}\s-o\b|>>\s{0,4}\/etc\/passwd\b|\becho\b[^\n]{0,200}:0:0:[^\n]{0,200}\|\s{0,4}(?:sudo\s{1,4})?tee\s{1,4}-a\s{1,4}\/etc\/passwd/),
  dual(T('persist.sudoers', 'T1548.003', 'Password-less sudo is granted', 'privilege_escalation', 'medium', ['nopasswd'],
    /nopasswd[^\n]{0,80}(?:>>?\s{0,4}|tee\s{1,4}(?:-a\s{1,4})?)\/etc\/sudoers/)),
  T('privesc.uac_bypass', 'T1548.002', 'UAC is bypassed through an auto-elevating binary', 'privilege_escalation', 'high', ['ms-settings', 'mscfile', 'exefile', 'akagi', 'folder\\shell', 'delegateexecute', 'windir'],
    /\\software\\{1,2}classes\\{1,2}(?:ms-settings|mscfile|exefile|folder|launcher\.systemsettings)\\{1,2}shell\\{1,2}(?:open|runas)\\{1,2}command|\bakagi(?:32|64)?(?:\.exe)?\s{1,4}\d{1,3}\b|hkcu:?\\{1,2}environment[^\n]{0,80}windir[^\n]{0,200}(?:&&|;|cmd|powershell)/),

  // ---- Account manipulation (admin scripts create users too: dual) ----
  dual(T('persist.local_admin', 'T1136.001', 'A local account is created and added to the administrators', 'persistence', 'medium', ['net user', 'localgroup'],
    /\bnet1?\s{1,4}user\s[^\n]{0,80}\/add\b[^\n]{0,300}\bnet1?\s{1,4}localgroup\s{1,4}["']?administrators["']?\s[^\n]{0,80}\/add\b/)),

  // ---- More persistence points ----
  T('persist.cron_payload', 'T1053.003', 'A cron entry runs a file from a temp folder or a network command', 'persistence', 'high', ['cron'],
    new RegExp(String.raw`(?:${TEMP}|\bcurl\s|\bwget\s|/dev/tcp/|\bnc\s|\bbase64\s)[^\n]{0,300}(?:>>?\s{0,4}/etc/cron(?:tab|\.d/)|\|\s{0,4}crontab\s{1,4}-|/var/spool/cron/)|@reboot\s[^\n]{0,200}(?:${TEMP}|/dev/tcp/|\bnc\s)`)),
  dual(T('persist.boot_script', 'T1037.004', 'A boot or login script is written (rc.local, init.d, motd, autostart)', 'persistence', 'medium', ['rc.local', 'init.d', 'motd', 'autostart', 'udev', 'if-up.d', 'if-down.d', '/etc/profile', 'bash.bashrc'],
    /(?:>>?\s{0,4}|tee\s{1,4}(?:-a\s{1,4})?|\bsed\s{1,4}-i\b[^\n]{0,200}\s)["']?(?:\/etc\/rc\.local|\/etc\/rc\.d\/rc\.local|\/etc\/init\.d\/\S|\/etc\/update-motd\.d\/\S|\/etc\/udev\/rules\.d\/\S|\/etc\/network\/if-(?:up|down)\.d\/\S|\/etc\/profile\.d\/\S|\/etc\/profile\b|\/etc\/bash\.bashrc\b|\S{0,40}\/(?:\.config|xdg)\/autostart\/\S{1,80}\.desktop)/)),
  T('persist.boot_payload', 'T1037.004', 'A boot script is made to start a network command or a temp file', 'persistence', 'high', ['rc.local', 'init.d', 'motd'],
    new RegExp(String.raw`(?:${TEMP}|/dev/tcp/|\bnc\s|\bcurl\s|\bwget\s)[^\n]{0,300}(?:>>?\s{0,4}|tee\s{1,4}(?:-a\s{1,4})?)["']?(?:/etc/rc\.local|/etc/rc\.d/rc\.local|/etc/init\.d/\S|/etc/update-motd\.d/\S)`)),
  T('persist.winlogon', 'T1547.004', 'The Winlogon Userinit or Shell value is changed', 'persistence', 'high', ['winlogon'],
    /\\windows nt\\{1,2}currentversion\\{1,2}winlogon\b[^\n]{0,120}(?:userinit|\bshell\b|\bnotify\b)[^\n]{0,200}(?:,|\.exe|\.dll|\.bat|\.ps1|\.vbs)/),
  T('persist.ifeo', 'T1546.012', 'A debugger or exit monitor is attached to a program (Image File Execution Options)', 'persistence', 'high', ['image file execution options', 'silentprocessexit'],
    /image file execution options\\{1,2}[^\n\\]{1,80}\\?[^\n]{0,80}(?:debugger|globalflag)|silentprocessexit\\{1,2}[^\n]{0,120}monitorprocess/),
  T('persist.accessibility', 'T1546.008', 'An accessibility program is replaced or hijacked', 'persistence', 'high', ['sethc', 'utilman', 'osk.exe', 'magnify', 'narrator', 'displayswitch', 'atbroker'],
    /(?:image file execution options\\{1,2}(?:sethc|utilman|osk|magnify|narrator|displayswitch|atbroker)\.exe|\b(?:copy|move|cp|takeown|icacls)\b[^\n]{0,120}\\system32\\{1,2}(?:sethc|utilman|osk|magnify|narrator|displayswitch)\.exe)/),
  T('persist.appinit_dlls', 'T1546.010', 'AppInit_DLLs or another DLL auto-load point is set', 'persistence', 'high', ['appinit_dlls', 'netsh', 'monitors', 'lsa', 'office test', 'userinitmprlogonscript', 'appcertdlls', 'timeproviders'],
    /appinit_dlls|\\session manager\\{1,2}appcertdlls|\\w32time\\{1,2}timeproviders\\[^\n]{0,120}dllname|\bnetsh(?:\.exe)?\s{1,4}add\s{1,4}helper\b|\\control\\{1,2}print\\{1,2}monitors\\|\\control\\{1,2}lsa\b[^\n]{0,80}(?:security packages|authentication packages|notification packages)|\\office test\\{1,2}special\\{1,2}perf|userinitmprlogonscript/),

  // ---- More defence tampering ----
  T('evasion.ps_downgrade', 'T1562.010', 'PowerShell 2 is started, with evasive options, to escape script logging and AMSI', 'defense_evasion', 'medium', ['-v 2', '-version 2'],
    /\b(?:powershell|pwsh)(?:\.exe)?["']?\s[^\n]{0,60}-v(?:ersion)?\s{1,4}2(?:\.0)?\s[^\n]{0,200}(?:\s-(?:e|ec|enc|encodedcommand)\s|\s-(?:w|windowstyle)\s{1,4}h|\s-(?:ep|exec|executionpolicy)\s{1,4}bypass|\biex\b|invoke-expression|downloadstring|amsi)/),
  T('evasion.defender_service', 'T1562.001', 'The Defender service or its signatures are switched off', 'defense_evasion', 'high', ['windefend', 'mpcmdrun', 'sense', 'wdnissvc', 'tamperprotection'],
    /\b(?:sc|sc\.exe|net|net1)\s{1,4}(?:stop|config|delete)\s{1,4}["']?(?:windefend|wdnissvc|sense|wdboot|wdfilter)\b|(?:stop|set)-service\s[^\n]{0,40}(?:windefend|wdnissvc)|\bmpcmdrun(?:\.exe)?["']?\s{1,4}-removedefinitions|tamperprotection["']?\s[^\n]{0,60}(?:\/d\s{1,4}0|-value\s{1,4}0)/),
  T('evasion.audit_off', 'T1562.002', 'Audit policy or the audit daemon is switched off', 'defense_evasion', 'high', ['auditpol', 'auditctl', 'auditd', 'httplogging'],
    /\bauditpol(?:\.exe)?\s{1,4}\/(?:clear|remove)\b|\bauditpol(?:\.exe)?\s[^\n]{0,120}\/(?:success|failure):disable|\bauditctl\s{1,4}-(?:d|e\s{0,2}0)\b|\b(?:systemctl|service)\s{1,4}(?:stop|disable|mask)\s{1,4}auditd\b|\bauditd\s{1,4}stop\b|\/section:httplogging\s{1,4}\/dontlog:true/),
  T('evasion.usn_journal', 'T1070', 'The NTFS change journal is deleted', 'defense_evasion', 'high', ['fsutil'],
    /\bfsutil(?:\.exe)?\s{1,4}usn\s{1,4}deletejournal\b/),
  dual(T('evasion.firewall_off', 'T1562.004', 'The host firewall or SELinux is switched off', 'defense_evasion', 'medium', ['netsh', 'firewall', 'ufw', 'iptables', 'setenforce', 'selinux'],
    /\bnetsh(?:\.exe)?\s{1,4}(?:advfirewall\s{1,4}set\s{1,4}\w{0,20}\s{0,4}state\s{1,4}off|firewall\s{1,4}set\s{1,4}opmode\s{1,4}(?:mode=)?disable)|set-netfirewallprofile\b[^\n]{0,80}-enabled\s{1,4}(?:\$?false|0)|\bufw\s{1,4}disable\b|\biptables\s{1,4}-f\b|\b(?:systemctl|service)\s{1,4}(?:stop|disable)\s{1,4}firewalld\b|\bsetenforce\s{1,4}0\b/)),
  T('evasion.ads', 'T1564.004', 'A payload is hidden in or run from an NTFS alternate data stream', 'defense_evasion', 'medium', ['.txt:', '.log:', '.ini:', '.dat:', '.jpg:', '.png:', '.doc:', '.pdf:', '.zip:', '.bin:', '.tmp:', '.xml:', '.exe:', '.dll:', '.lnk:', '-stream'],
    /[a-z0-9_]\.(?:txt|log|ini|dat|jpg|png|doc|pdf|zip|bin|tmp|xml|exe|dll|lnk):[a-z0-9_-]{1,60}\.(?:exe|dll|ps1|vbs|js|bat|cmd|hta)\b|(?:add-content|set-content)\b[^\n]{0,200}\s-stream\s{1,4}["']?(?!zone\.identifier)[\w.-]{1,60}|(?:get-content|\bgc)\b[^\n]{0,200}\s-stream\s{1,4}["']?(?!zone\.identifier)[\w.-]{1,60}[^\n]{0,80}\|\s{0,4}(?:\biex\b|invoke-expression)/),

  // ---- More signed-binary proxies (LOLBAS) and download helpers ----
  T('lolbin.wmic_interpreter', 'T1047', 'WMI starts an interpreter, a script binary or a temp file', 'execution', 'high', ['wmic', 'win32_process'],
    new RegExp(String.raw`(?:\bwmic(?:\.exe)?\b[^\n]{0,120}process\s{1,4}call\s{1,4}create|invoke-(?:wmi|cim)method[^\n]{0,160}win32_process[^\n]{0,80}create|winrm(?:\.cmd)?\s{1,4}invoke\s{1,4}create\s{1,4}wmicimv2/win32_process)[^\n]{0,120}(?:powershell|pwsh|cmd(?:\.exe)?["']?\s{1,4}/[ck]\s{1,4}(?!del\b|echo\b|rd\b|rmdir\b|mkdir\b|md\b|copy\b|move\b|type\b|dir\b|netstat\b|ipconfig\b|set\b)|mshta|rundll32|regsvr32|[wc]script|certutil|bitsadmin|\\\\[\w.-]{1,100}\\|(?:${TEMP.slice(3, -1)})[^\s"']{1,120}\.(?:exe|dll|ps1|bat|cmd|vbs|js|hta|scr))|winrm(?:\.cmd)?\s{1,4}invoke\s{1,4}create\s{1,4}wmicimv2/win32_process`)),
  T('lolbin.wmic_cli_create', 'T1047', 'The wmic command line creates a process', 'execution', 'medium', ['wmic'],
    /\bwmic(?:\.exe)?\b[^\n]{0,120}\bprocess\s{1,4}call\s{1,4}create\b/),
  T('lolbin.msxsl', 'T1220', 'msxsl runs script inside an XSL stylesheet', 'defense_evasion', 'high', ['msxsl'],
    /\bmsxsl(?:\.exe)?\s{1,4}\S{1,200}\s{1,4}\S{1,200}/),
  T('lolbin.indirect_exec', 'T1202', 'A program is started through an indirect launcher (forfiles, pcalua, conhost, explorer)', 'defense_evasion', 'medium', ['forfiles', 'pcalua', 'conhost', 'explorer', 'scriptrunner', 'wsl'],
    /\bforfiles(?:\.exe)?\b[^\n]{0,160}\/c\s{1,4}["']?(?:cmd(?:\.exe)?\s{1,4}\/c\s{1,4}(?!del\b|echo\b|rd\b|rmdir\b|move\b|copy\b|if\b|@)|powershell|[^"'\s]{1,60}\.exe)|\bforfiles(?:\.exe)?\s[^\n]{0,40}\/p\s{1,4}c:\\windows\\system32\s{1,4}\/m\s{1,4}\S{1,40}\.exe|\bpcalua(?:\.exe)?\s{1,4}-a\s|\bconhost(?:\.exe)?\s{1,4}(?:--headless\s{1,4})?["']?(?:cmd|powershell|[^\s"']{1,120}\.exe)\b|\bexplorer(?:\.exe)?\s{1,4}\/root,|\bscriptrunner(?:\.exe)?\s{1,4}-appvscript|\bwsl(?:\.exe)?\s{1,4}(?:-e|--exec)\s/),
  T('lolbin.download_helper', 'T1105', 'A Windows tool is used to download a file', 'command_and_control', 'high', ['mpcmdrun', 'certreq', 'certoc', 'finger ', 'finger.exe', 'esentutl', 'hh ', 'hh.exe', 'ieexec', 'presentationhost', 'imewdbld', 'configsecuritypolicy', 'xwizard', 'nimgrab', 'unzipto', 'replace \\\\', 'replace.exe', 'cmdl32', 'printbrm', 'ms-appinstaller'],
    /\bmpcmdrun(?:\.exe)?["']?\s{1,4}-downloadfile\b|\bcertreq(?:\.exe)?\s{1,4}-post\b[^\n]{0,60}https?:|\bcertoc(?:\.exe)?\s{1,4}-(?:getcacaps|loaddll)\b|\bfinger(?:\.exe)?\s{1,4}\S{1,80}@\S{1,200}[^\n]{0,40}\|\s{0,4}(?:more\b[^\n|]{0,20}\|\s{0,4})?(?:cmd|powershell|(?:ba)?sh)\b|\b(?:hh|ieexec|presentationhost|imewdbld|configsecuritypolicy)(?:\.exe)?\s{1,4}["']?https?:|\bxwizard(?:\.exe)?\s{1,4}runwizard\b[^\n]{0,80}\/zhttps?:|\besentutl(?:\.exe)?\s{1,4}\/y\s{1,4}\\\\|\bnimgrab(?:\.exe)?\s{1,4}https?:|\bgup(?:\.exe)?\s[^\n]{0,40}-unzipto\b|\breplace(?:\.exe)?\s{1,4}\\\\[\w.@-]{1,100}\\|\bcmdl32(?:\.exe)?\s{1,4}\/vpn\s{1,4}\/lan\b|\bprintbrm(?:\.exe)?\s[^\n]{0,40}-d\s{1,4}\\\\|\bms-appinstaller:(?:\/\/)?\?source=https?:/),
  T('lolbin.rundll32_url', 'T1218.011', 'rundll32 hands a URL or a COM class to a DLL export', 'defense_evasion', 'high', ['rundll32'],
    /\brundll32(?:\.exe)?\s[^\n]{0,120}\.dll["']?\s{0,2},\s{0,2}#?\w{1,60}\s[^\n]{0,40}https?:|\brundll32(?:\.exe)?\s{1,4}-sta\s|\brundll32(?:\.exe)?\s[^\n]{0,80}advpack(?:\.dll)?\s{0,2},\s{0,2}(?:launchinfsection|registerocx)/),
  T('lolbin.signed_binary_url', 'T1218', 'A signed Windows or Office binary is handed a URL on a bare IP or plain http', 'defense_evasion', 'medium',
    ['ngen', 'xsd', 'ecmangen', 'winword', 'excel', 'powerpnt', 'msaccess', 'mspub', 'visio', 'winproj', 'outlook', 'msoxmled', 'msohtmed', 'protocolhandler', 'devinit', 'msedge', 'pubprn', 'installutil', 'cmstp', 'msdeploy'],
    // Names that are also words (excel, outlook, visio, xsd) count only as `.exe`: code and XML
    // name them next to namespace URLs on plain http.
    new RegExp(String.raw`\b(?:(?:ngen|xsd|winword|excel|powerpnt|msaccess|mspub|visio|winproj|outlook)\.exe|(?:ecmangen|msoxmled|msohtmed|protocolhandler|devinit|msedge_proxy|installutil|cmstp|msdeploy)(?:\.exe)?|pubprn\.vbs)["']?\s[^\n]{0,80}(?:script:)?${SHADY_URL}`)),
  T('lolbin.dll_injection_helper', 'T1218.013', 'A signed tool injects a DLL or starts a program for the caller', 'defense_evasion', 'high', ['mavinject', 'dnscmd', 'ttdinject', 'tttracer', 'vshadow', 'msdeploy', 'diskshadow'],
    /\bmavinject(?:\.exe)?\s{1,4}\d{1,6}\s{1,4}\/injectrunning\b|\bdnscmd(?:\.exe)?\s[^\n]{0,80}\/serverlevelplugindll\b|\bttdinject(?:\.exe)?\s[^\n]{0,120}\/launch\b|\bvshadow(?:\.exe)?\s[^\n]{0,40}-exec=|\bmsdeploy(?:\.exe)?\s[^\n]{0,80}runcommand|\bdiskshadow(?:\.exe)?\s{1,4}\/s\s/),

  // ---- More credential access ----
  T('cred.windows_vault', 'T1555.004', 'Saved Windows credentials are listed', 'credential_access', 'medium', ['vaultcmd', 'cmdkey'],
    /\bvaultcmd(?:\.exe)?\s{1,4}\/list(?:creds|properties)?\b|\bcmdkey(?:\.exe)?\s{1,4}\/list\b/),
  T('cred.kerberos', 'T1558.003', 'Kerberos tickets are requested or dumped for offline cracking (Kerberoasting, AS-REP roasting)', 'credential_access', 'high', ['rubeus', 'kerberoast', 'getuserspns', 'getnpusers', 'kerberosrequestorsecuritytoken', 'asreproast'],
    /\brubeus(?:\.exe)?\s{1,4}(?:kerberoast|asreproast|asktgt|asktgs|dump|tgtdeleg|s4u|ptt|golden|silver|harvest|monitor|triage)\b|invoke-(?:kerberoast|rubeus|asreproast)|getuserspns(?:\.py)?\b|getnpusers(?:\.py)?\b|kerberosrequestorsecuritytoken|\bkerberoast\b/),
  T('cred.dump_tools', 'T1003', 'A credential-dumping tool is run', 'credential_access', 'high', ['secretsdump', 'pypykatz', 'lsassy', 'nanodump', 'hashdump', 'powerdump', 'gpppassword', 'ninjacopy', 'dcsync', 'safetykatz', 'crackmapexec', 'netexec'],
    /\bsecretsdump(?:\.py)?\s|\bpypykatz\s{1,4}(?:lsa|live|registry)\b|\blsassy\s|\bnanodump\b|\bhashdump\b|invoke-(?:powerdump|ninjacopy|dcsync)|get-gpppassword|\bsafetykatz\b|\b(?:crackmapexec|netexec|nxc|cme)\s[^\n]{0,160}\s--(?:sam|lsa|ntds)\b/),
  T('cred.shell_history', 'T1552.003', 'Shell or PowerShell command history is read', 'credential_access', 'medium', ['history'],
    /(?:get-content|\bgc|\bcat|\btype)\s{1,4}[^\n|;]{0,120}(?:\(?\s{0,2}get-psreadlineoption\s{0,2}\)?\.historysavepath|consolehost_history\.txt)|(?:^|[;&|]\s{0,2})cat\s{1,4}(?:~|\$home|\/root|\/home\/[^\s/]{1,64})\/\.(?:bash|zsh|sh)_history\b/m),
  T('cred.registry_search', 'T1552.002', 'The registry is searched for stored passwords', 'credential_access', 'medium', ['reg query', 'reg.exe query'],
    /\breg(?:\.exe)?\s{1,4}query\s{1,4}hk(?:lm|cu|ey_local_machine|ey_current_user)\s[^\n]{0,60}\/f\s{1,4}["']?pass(?:word|wd)?\b/),
  // Fifteenth round: procedures the model's one-liner gate had let past it as plain reads, which
  // no rule read (ATT&CK's descriptions of T1555, T1552.002, T1555.005 and T1048.003).
  T('cred.wifi_keys', 'T1555', "Saved Wi-Fi profiles are shown with their keys in clear text", 'credential_access', 'medium', ['key=clear', 'key = clear'],
    /\bnetsh(?:\.exe)?\s{1,4}wlan\s{1,4}show\s{1,4}profiles?\b[^\n]{0,160}\bkey\s{0,2}=\s{0,2}clear\b/),
  T('cred.autologon_registry', 'T1552.002', "Windows' autologon password is read from the registry", 'credential_access', 'medium', ['defaultpassword'],
    /\b(?:reg(?:\.exe)?\s{1,4}query|get-itemproperty(?:value)?|gp|gpv)\s[^\n]{0,160}\\winlogon\b[^\n]{0,160}\bdefaultpassword\b/),
  T('cred.vnc_password', 'T1552.002', "A VNC server's stored password is read from the registry", 'credential_access', 'medium', ['winvnc', 'tightvnc', 'realvnc', 'tigervnc', 'ultravnc'],
    /\b(?:reg(?:\.exe)?\s{1,4}query|get-itemproperty(?:value)?|gp|gpv)\s[^\n]{0,120}\\(?:orl\\winvnc3|realvnc\\winvnc4|tightvnc\\server|tigervnc\\winvnc4|ultravnc)\b[^\n]{0,80}\bpassword/),
  T('cred.password_manager_search', 'T1555.005', 'Drives are searched for password manager databases', 'credential_access', 'medium', ['.kdbx', '.kdb', '.psafe3', '.1pif'],
    /\b(?:get-childitem|gci|ls|dir|find|where(?:\.exe)?)\s(?=[^\n|;]{0,320}(?:-r(?:ecurse)?\b|\/s\b|\/r\b|-i?name\b))[^\n|;]{0,320}\*\.(?:kdbx?|psafe3|1pif)\b/),
  T('exfil.dns_lookup_output', 'T1048.003', "A command's output is sent out as part of a DNS lookup or ping name", 'command_and_control', 'medium', ['dig', 'nslookup', 'host', 'drill', 'ping'],
    /\b(?:dig|nslookup|host|drill|ping)\s[^\n|;&]{0,40}(?:\$\(|`)\s{0,2}(?:whoami|id|cat|base64|xxd|od|uname|env|printenv|ls)\b[^\n`)]{0,80}[)`][^\s"']{0,60}\.[a-z0-9-]{1,63}\.[a-z]{2,}\b/),

  // ---- Offensive frameworks known by their commands (T1059.001 plus the technique they serve) ----
  T('tool.offensive_powershell', 'T1059.001', 'An offensive PowerShell framework function is called', 'execution', 'high', ['invoke-', 'get-keystrokes', 'get-timedscreenshot', 'find-localadminaccess', 'sharphound', 'powerup', 'sharpersist', 'persistence', 'avsignature', 'gppautologon', 'install-ssp', 'volumeshadowcopy', 'out-compressed', 'out-encoded', 'out-encrypted', 'set-criticalprocess', 'set-masterbootrecord'],
    /\binvoke-(?:shellcode|reflectivepeinjection|dllinjection|powershell(?:tcp|udp|icmp)(?:oneline)?|tokenmanipulation|credentialinjection|allchecks|privesc(?:audit)?|bloodhound|sharphound|smbexec|wmiexec|thehash|psinject|portscan|userhunter|sharefinder|mimikittenz|inveigh|wscriptbypassuac|eventvwrbypass|sdcltbypass|fodhelperbypass|psremoting|empire|seatbelt|sharpup|winpeas|mimidogz|nishang|bypassuac|dcomexec|massmimikatz|encryptedscript|runaspayload|servicesabuse|serviceabuse|conptyshell|amsibypass|persistence|wmicommand|reversednslookup|ninjacopy)\b|\b(?:add-persistence|find-avsignature|get-gppautologon|install-ssp|mount-volumeshadowcopy|new-elevatedpersistenceoption|new-userpersistenceoption|out-compresseddll|out-encodedcommand|out-encryptedscript|set-criticalprocess|set-masterbootrecord)\b|\bsharpersist(?:\.exe)?\s{1,4}-t\s|\bget-(?:keystrokes|timedscreenshot|vaultcredential|passhashes|lsasecret)\b|\bfind-localadminaccess\b|\bsharphound(?:\.exe|\.ps1)?\s{1,4}-c\b/),
  T('tool.linux_recon', 'T1082', 'A privilege-escalation enumeration script is fetched or run', 'execution', 'high', ['linpeas', 'linenum', 'lse.sh', 'linux-exploit-suggester', 'pspy', 'winpeas'],
    /\b(?:linpeas|linenum|lse|linux-exploit-suggester(?:-2)?|winpeas(?:any|x64|x86)?)(?:\.sh|\.exe|\.bat|\.pl)\b|\bpspy(?:32|64)\b/),

  // ---- Exfiltration (T1048, T1041) ----
  // Anonymous file-drop services: an upload there leaves no account behind (T1567.002). Users
  // share their own files that way too (Oh My Zsh's transfer plugin), so it is dual-use.
  dual(T('exfil.file_drop', 'T1567.002', 'A local file is uploaded to an anonymous file-sharing service', 'command_and_control', 'medium', ['file.io', 'transfer.sh', '0x0.st', 'anonfiles', 'bashupload', 'oshi.at', 'temp.sh', 'gofile.io', 'filebin.net', 'tmpfiles.org'],
    /\bcurl\b[^\n]{0,200}(?:-f\s{0,2}["']?[\w.-]{0,40}=@|--upload-file\s|\s-t\s|--data-binary\s{0,2}["']?@)[^\n]{0,200}https?:\/\/(?:[\w-]{1,40}\.)?(?:file\.io|transfer\.sh|0x0\.st|anonfiles\.com|bashupload\.com|oshi\.at|temp\.sh|gofile\.io|filebin\.net|tmpfiles\.org)\b|(?:invoke-webrequest|invoke-restmethod|\biwr|\birm)\b[^\n]{0,200}https?:\/\/(?:[\w-]{1,40}\.)?(?:file\.io|transfer\.sh|0x0\.st|anonfiles\.com|bashupload\.com|oshi\.at|temp\.sh|gofile\.io|filebin\.net|tmpfiles\.org)\b[^\n]{0,200}-method\s{1,3}["']?(?:post|put)\b/)),
  T('exfil.http_upload', 'T1041', 'A local file is uploaded to a bare IP or plain-http host', 'command_and_control', 'medium', ['curl', 'wget', 'invoke-webrequest', 'invoke-restmethod', 'uploadfile'],
    new RegExp(String.raw`\bcurl\b[^\n]{0,200}(?:-f\s{0,2}["']?[\w.-]{0,40}=@|--upload-file\s|\s-t\s|--data-binary\s{0,2}["']?@)[^\n]{0,200}${BARE_URL}|\bwget\b[^\n]{0,120}--post-file[^\n]{0,200}${BARE_URL}|(?:invoke-webrequest|invoke-restmethod|\biwr|\birm)\b[^\n]{0,200}-infile\s[^\n]{0,200}${BARE_URL}|\.uploadfile\s{0,2}\(\s{0,2}["']${BARE_URL}`)),

  // ---- Obfuscated launchers (T1027) ----
  // Joining with a space or comma builds a command line (npm's own npm.ps1 does, then runs it):
  // obfuscation joins characters or fragments with nothing between them.
  T('exec.obfuscated_iex', 'T1027', 'An expression rebuilt at run time (join, split, reverse, XOR, SecureString) is executed', 'defense_evasion', 'high', ['iex', 'invoke-expression', 'scriptblock', 'invokescript', '&(', '.('],
    /(?:\biex\b|invoke-expression|\[scriptblock\]::create|invokecommand\.invokescript|(?:^|[;|(]\s{0,2})[.&]\s{0,2}\(\s{0,2}["'$(])[^\n]{0,400}(?:-join(?!\s{0,2}["'][ ,;]{1,2}["'])|-split\b|-bxor\b|\[array\]::reverse|securestringtobstr|ptrtostring(?:auto|bstr|uni)|\[convert\]::toint(?:16|32)\s{0,2}\(|\[char\[\]\]|\[string\]::join|\[regex\]::matches[^\n]{0,80}righttoleft)|(?:-join(?!\s{0,2}["'][ ,;]{1,2}["'])|-bxor\b|\[array\]::reverse|securestringtobstr|ptrtostring(?:auto|bstr|uni)|\[string\]::join)[^\n]{0,400}\|\s{0,4}(?:\biex\b|invoke-expression|[.&]\s{0,2}\(|[.&]\s{0,2}\$)/m),
  T('exec.iex_alias', 'T1027', 'Invoke-Expression is spelled out of a variable name at run time', 'defense_evasion', 'high', ['mdr', 'mdr*'],
    /\(\s{0,2}(?:gv|get-variable|variable|dir\s{1,4}variable:|ls\s{1,4}variable:|get-childitem\s{1,4}variable:)\s{0,4}["']?\*mdr\*["']?\s{0,2}\)\.name\s{0,2}\[\s{0,2}3\s{0,2},\s{0,2}11\s{0,2},\s{0,2}2\s{0,2}\]/),
  // A member called through a Get-Member query (`$x.((... | Get-Member)[6].Name)`, a method
  // chosen by `Name -like '*wn*a'`) or a command through a wildcard lookup (`.(GAL IE*)`), as
  // Invoke-CradleCrafter's and Invoke-Obfuscation's launchers hide DownloadString and
  // Invoke-Expression. Admin code that lists members (`Get-Member | Where Name -like 'Get*'`)
  // reads them; it does not call them through the query.
  T('exec.member_name_obfuscation', 'T1027', 'PowerShell calls a member or command it finds by position or wildcard instead of naming it', 'defense_evasion', 'high', ['get-member', '|gm', '| gm', '|member', '| member', 'psobject.methods', '(gal', '( gal', '(gcm', '( gcm', '(get-alias', '( get-alias', '(get-command', '( get-command'],
    /\.\(\s{0,2}\([^\n]{0,160}?\|\s{0,2}(?:get-member|gm|member)\b[^\n]{0,160}?\.name\s{0,2}\)|psobject\.methods\s{0,2}\|[^\n]{0,80}\.name\s{0,2}-[ci]?like\s{0,2}["'][^"'\n]{0,20}\*|[.&]\s{0,2}\(\s{0,2}(?:gal|get-alias|gcm|get-command)\s{1,3}["']?[\w-]{0,6}\*[\w*-]{0,20}["']?\s{0,2}\)/),
  T('exec.stdin_launcher', 'T1027.010', 'A command is handed to PowerShell through an environment variable, stdin or the clipboard', 'defense_evasion', 'medium', ['powershell', 'pwsh', 'clipboard'],
    /\bset\s{1,4}["']?\w{1,30}=[^\n]{0,400}&&\s{0,4}(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,120}\$env:\w{1,30}|\|\s{0,4}(?:powershell|pwsh)(?:\.exe)?\s{1,4}(?:-\w{1,20}\s{1,4}(?:\w{1,20}\s{1,4})?){0,6}-(?:command\s{1,4}-|c\s{1,4}-)?(?:\s|["']?$)|get-clipboard[^\n|]{0,40}\|\s{0,4}(?:\biex\b|invoke-expression)/m),
  T('evasion.renamed_lolbin', 'T1036.003', 'A system binary is copied under another name before use', 'defense_evasion', 'high', ['\\certutil.exe', '\\powershell.exe', '\\cmd.exe', '\\mshta.exe', '\\rundll32.exe', '\\regsvr32.exe', '\\wscript.exe', '\\cscript.exe', '\\bitsadmin.exe', '\\msbuild.exe', '\\installutil.exe', '\\regasm.exe', '\\regsvcs.exe', '\\msiexec.exe', '\\wmic.exe'],
    /(?:\bcopy|copy-item|\bcp)\s[^\n]{0,80}\\(?:certutil|powershell|cmd|mshta|rundll32|regsvr32|wscript|cscript|bitsadmin|msbuild|installutil|regasm|regsvcs|msiexec|wmic)\.exe["']?\s{1,4}["']?[^\s"']{0,120}\.(?:exe|com|scr|txt|dat|tmp|log)\b/),

  // ---- More persistence and hijack points ----
  T('persist.registry_hijack', 'T1546.015', 'A COM, shell-command, logon or boot registry value is pointed at new code', 'persistence', 'high', ['clsid', 'bootexecute', 'startupprograms', 'bootverificationprogram', 'servicedll', 'user shell folders', 'taskcache', 'scrnsave', 'hangs'],
    /\\clsid\\{1,2}\{[0-9a-f-]{36}\}\\{1,2}(?:shell\\{1,2}open\\{1,2}command|inprocserver32|localserver32)\b[^\n]{0,200}(?:\/d\s|-value\s|\/ve\b|reg_sz|set-itemproperty|new-itemproperty)|\\session manager["']?\s[^\n]{0,40}bootexecute\b|\\session manager\\{1,2}?["']?[^\n]{0,40}\/v\s{1,4}bootexecute|\\wds\\{1,2}rdpwd["']?\s[^\n]{0,60}startupprograms|\\control\\{1,2}bootverificationprogram\b|\\services\\{1,2}[^\n\\]{1,60}\\{1,2}parameters["']?\s[^\n]{0,80}\bservicedll\b|\\control panel\\{1,2}desktop["']?\s[^\n]{0,60}scrnsave\.exe|\\windows error reporting\\{1,2}hangs["']?\s[^\n]{0,60}\bdebugger\b|\\explorer\\{1,2}user shell folders["']?\s[^\n]{0,80}(?:common )?startup\b|\\schedule\\{1,2}taskcache\\{1,2}(?:tree|tasks)\\[^\n]{0,200}(?:\/d\s|-value\s|\bsd\b|\bindex\b)/),
  T('persist.mof', 'T1546.003', 'A MOF file registers WMI objects from a temp folder or into root\\subscription', 'persistence', 'medium', ['mofcomp'],
    new RegExp(String.raw`\bmofcomp(?:\.exe)?\s[^\n]{0,80}(?:-n:\s{0,2}root\\{1,2}subscription|${TEMP.slice(3, -1)})`)),
  T('persist.cron_file', 'T1053.003', 'A crontab is replaced from a file in a temp folder', 'persistence', 'high', ['crontab'],
    new RegExp(String.raw`\bcrontab\s{1,4}(?:-u\s{1,4}\S{1,32}\s{1,4})?["']?(?:/tmp/|/dev/shm/|/var/tmp/)`)),

  // ---- More credential access ----
  T('cred.shadow_copy', 'T1003.003', 'A volume shadow copy is created or linked to read locked credential files', 'credential_access', 'medium', ['shadow', 'shadowcopy', 'mklink'],
    /vssadmin(?:\.exe)?\s{1,4}create\s{1,4}shadow\b|\bwmic(?:\.exe)?\s[^\n]{0,80}shadowcopy\s{1,4}call\s{1,4}create\b|win32_shadowcopy\]?\s{0,2}\)?\.create\s{0,2}\(|invoke-cimmethod\s[^\n]{0,80}win32_shadowcopy[^\n]{0,80}create|mklink\s[^\n]{0,120}globalroot\\{1,2}device\\{1,2}harddiskvolumeshadowcopy|hivenightmare|serioussam/),
  T('cred.hive_copy', 'T1003.002', 'The SAM, SYSTEM or SECURITY hive file is copied or read raw', 'credential_access', 'high', ['config\\sam', 'config\\system', 'config\\security', 'config\\\\sam', 'config\\\\system', 'config\\\\security', 'config/sam', 'config/system', 'config/security', 'repair\\'],
    /\b(?:esentutl(?:\.exe)?\s{1,4}\/y|copy|copy-item|certutil[^\n]{0,40}-encodehex|\[system\.io\.file\]::(?:copy|readallbytes))\b[^\n]{0,120}(?:[\\/]{1,2}system32[\\/]{1,2}config[\\/]{1,2}(?:sam|system|security)\b|\\repair\\{1,2}sam\b)/),
  T('cred.lsass_tools', 'T1003.001', 'An LSASS dumping tool is run', 'credential_access', 'critical', ['dumpert', 'xordump', 'handlekatz', 'ppldump', 'mirrordump', 'lsass'],
    /\b(?:outflank-)?dumpert(?:\.exe|\.dll)?\b|\bxordump\b|\bhandlekatz\b|\bppldump\b|\bmirrordump\b|get-process\s{1,4}lsass\b[^\n]{0,120}(?:dump|minidump)|\blsass(?:\.exe)?\b[^\n]{0,80}\.dmp\b/),

  // ---- More signed-binary proxies ----
  T('lolbin.rundll32_odd', 'T1218.011', 'rundll32 runs an export by ordinal, from a user path or from a file that is not a DLL', 'defense_evasion', 'medium', ['rundll32'],
    /\brundll32(?:\.exe)?\s{1,4}["']?[^\n,"']{1,200}["']?\s{0,2},\s{0,2}#\d{1,5}\b|\brundll32(?:\.exe)?\s{1,4}["']?[^\n,"']{1,200}\.(?:png|jpg|jpeg|gif|txt|dat|tmp|log|bin|dmp|so|cpl\.txt)["']?\s{0,2},|\brundll32(?:\.exe)?\s{1,4}desk\.cpl\s{0,2},\s{0,2}installscreensaver|\brundll32(?:\.exe)?\s{1,4}(?:syssetup|setupapi)\.dll\s{0,2},\s{0,2}(?:setupinfobjectinstallaction|installhinfsection)/),
  T('lolbin.regsvr32_odd', 'T1218.010', 'regsvr32 registers a file that is not a DLL', 'defense_evasion', 'high', ['regsvr32'],
    /\bregsvr32(?:\.exe)?\s[^\n]{0,60}["']?[^\s"']{1,200}\.(?:png|jpg|jpeg|gif|txt|dat|tmp|log|bin|sct)["']?(?:\s|$)/m),
  T('lolbin.mshta_local', 'T1218.005', 'mshta runs a local HTA application', 'defense_evasion', 'medium', ['mshta'],
    /\bmshta(?:\.exe)?["']?\s{1,4}["']?[^\s"']{1,200}\.hta\b/),
  T('lolbin.installutil_helper', 'T1218.004', 'InstallUtil code is invoked through its help text or the managed installer class', 'defense_evasion', 'high', ['installutil', 'managedinstallerclass'],
    /\binstallutil(?:\.exe)?\s{1,4}\/\?\s{1,4}\S|managedinstallerclass\]?\s{0,2}::\s{0,2}installhelper/),
  T('ingress.download_to_temp', 'T1105', 'A file is fetched from a bare IP into a temp or public folder', 'command_and_control', 'medium', ['://0', '://1', '://2', '://3', '://4', '://5', '://6', '://7', '://8', '://9'],
    new RegExp(String.raw`https?://\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}[^\n]{0,200}(?:${TEMP.slice(3, -1)})|(?:${TEMP.slice(3, -1)})[^\n]{0,200}https?://\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?!\S{0,60}(?:/api|/health|/status))`)),
  T('exec.decode_to_shell', 'T1140', 'Hex, reversed or otherwise encoded text is decoded into a shell', 'defense_evasion', 'high', ['xxd', 'openssl', 'rev |', 'rev|', 'base32', 'b64decode'],
    new RegExp(String.raw`(?:\bxxd\s{1,4}-r|\bopenssl\s{1,4}(?:base64|enc)\b[^\n|]{0,40}\s-d\b|\brev\b|\bbase32\s{1,4}(?:-d|--decode)|\bb64decode\s{1,4}-[rp])[^\n]{0,200}\|\s{0,4}(?:sudo\s{1,4})?${SHELL}`)),

  // ---- Tampering with PowerShell's own defences (T1562.001, T1562.002) ----
  T('evasion.reflection_flag', 'T1562.001', 'A private static field of PowerShell is flipped through reflection (AMSI or logging switched off)', 'defense_evasion', 'critical', ['nonpublic'],
    /\.getfield\s{0,2}\([^\n]{0,200}nonpublic\s{0,2},\s{0,2}static[^\n]{0,200}\.setvalue\s{0,2}\(\s{0,2}\$null\s{0,2},\s{0,2}(?:\$true|\$false|\$null|\[?\w{0,20}\]?\s{0,2}\$\w{1,30}|new-object)/),
  T('evasion.script_logging', 'T1562.002', 'PowerShell script-block or module logging is switched off', 'defense_evasion', 'high', ['cachedgrouppolicysettings', 'scriptblocklogging', 'modulelogging', 'transcription'],
    /cachedgrouppolicysettings|\b(?:enablescriptblocklogging|enablemodulelogging|enabletranscripting|enablescriptblockinvocationlogging)["']?\s[^\n]{0,60}(?:\/d\s{1,4}0\b|-value\s{1,4}0\b|\]\s{0,2}=\s{0,2}0\b)/),
  T('evasion.memory_patch', 'T1562.001', 'A function in a loaded DLL is looked up, made writable and overwritten (in-memory patch)', 'defense_evasion', 'high', ['getprocaddress'],
    /getprocaddress/, /virtualprotect/, /marshal\]\s{0,2}::\s{0,2}copy\s{0,2}\(|writeprocessmemory|\.writebyte\s{0,2}\(|rtlmovememory/),

  // ---- Signed script proxies and remote launch points (T1216, T1105) ----
  T('lolbin.signed_script', 'T1216', 'A signed Windows script runs a command for the caller', 'defense_evasion', 'high', ['syncappvpublishingserver', 'pubprn', 'manage-bde', 'cl_invocation', 'cl_mutexverifiers'],
    /\bsyncappvpublishingserver(?:\.vbs|\.exe)?\s{1,4}["']?n\s{0,2};|\bpubprn\.vbs\s[^\n]{0,80}script:|\bset\s{1,4}comspec=[^\n]{0,200}manage-bde\.wsf|cl_invocation\.ps1[^\n]{0,200}syncinvoke|cl_mutexverifiers\.ps1[^\n]{0,200}runaftercancelprocess/),
  T('ingress.remote_share_exec', 'T1105', 'Code is run straight from a share on a bare IP or a WebDAV path', 'command_and_control', 'medium', ['\\\\'],
    /\bcmd(?:\.exe)?\s{1,4}\/[ck]\s{0,4}<\s{0,4}\\\\|\\\\(?:\d{1,3}\.){3}\d{1,3}(?:@(?:ssl@)?\d{1,5})?\\[^\s"']{1,200}\.(?:exe|dll|ps1|bat|cmd|hta|vbs|js|msi|sct)\b|@(?:ssl@)?\d{1,5}\\davwwwroot\\/),

  // ---- More persistence points ----
  T('persist.hijack_linux', 'T1546.004', 'A Linux hook is planted: a sudo alias that runs more, LD_PRELOAD from a temp folder, set-uid capability or an APT/PAM hook that runs a network command', 'persistence', 'high', ['alias sudo', 'ld_preload', 'setcap', 'pre-invoke', 'post-invoke', 'pam_exec', 'core.pager', 'core.fsmonitor', 'core.sshcommand', 'core.editor', 'insmod'],
    new RegExp(String.raw`\balias\s{1,4}sudo\s{0,2}=\s{0,2}["'][^"'\n]{0,200}(?:;|&&|\|)|\b(?:echo|printf)\s[^\n]{0,40}alias\s{1,4}sudo\s{0,2}=[^\n]{0,300}>>|ld_preload\s{0,2}=\s{0,2}["']?(?:${TEMP.slice(3, -1)})|\bsetcap\s[^\n]{0,40}cap_setuid[^\n]{0,20}\+e?p|(?:pre|post)-invoke[^\n]{0,200}(?:\bnc\s|\bncat\s|/dev/tcp/|bash\s-i|\bcurl\s|\bwget\s|${TEMP.slice(3, -1)})|pam_exec\.so[^\n]{0,120}(?:${TEMP.slice(3, -1)})|\bgit\s{1,4}config\s[^\n]{0,40}core\.(?:pager|fsmonitor|sshcommand|editor)\s[^\n]{0,200}(?:\bnc\s|\bncat\s|/dev/tcp/|bash\s-i|\bcurl\s|\bwget\s)|\binsmod\s{1,4}["']?(?:${TEMP.slice(3, -1)})`)),
  dual(T('persist.ps_profile', 'T1546.013', 'The PowerShell profile is written', 'persistence', 'medium', ['$profile'],
    /(?:add-content|set-content|out-file|>>)\s[^\n]{0,40}\$profile\b|\$profile\b[^\n]{0,20}\s(?:add-content|set-content|out-file)\b/)),
  T('persist.dsrm', 'T1098', 'The DSRM administrator is allowed to log on over the network', 'persistence', 'high', ['dsrmadminlogonbehavior'],
    /dsrmadminlogonbehavior/),
  dual(T('persist.at', 'T1053.002', 'A job is queued with at', 'persistence', 'medium', ['at ', 'at.exe'],
    /(?:^|[;&|]\s{0,2})(?:c:\\windows\\system32\\)?at(?:\.exe)?\s{1,4}(?:\\\\\S{1,60}\s{1,4})?\d{1,2}:\d{2}\b|\|\s{0,4}at\s{1,4}(?:now|midnight|noon|teatime|\d{1,2}:\d{2})\b/m)),

  // ---- Offensive tooling known by name (T1588.002 plus the technique it serves) ----
  T('tool.offensive_cli', 'T1588.002', 'An offensive network tool is run (impacket, evil-winrm, Responder, Kerbrute, BloodHound collectors)', 'execution', 'high', ['impacket-', 'psexec.py', 'smbexec.py', 'wmiexec.py', 'atexec.py', 'dcomexec.py', 'smbserver.py', 'ntlmrelayx', 'getst.py', 'gettgt.py', 'ticketer.py', 'lookupsid.py', 'reg.py', 'addcomputer.py', 'rbcd.py', 'evil-winrm', 'responder', 'kerbrute', 'bloodhound-python', 'mitm6', 'chisel'],
    /(?:\bimpacket-|\b)(?:psexec|smbexec|wmiexec|atexec|dcomexec|smbserver|ntlmrelayx|getst|gettgt|ticketer|lookupsid|reg|addcomputer|rbcd)\.py\s|\bimpacket-(?:psexec|smbexec|wmiexec|atexec|dcomexec|smbserver|ntlmrelayx|secretsdump|getuserspns|getnpusers|ticketer)\b|\bevil-winrm\s[^\n]{0,40}-i\s|\bresponder(?:\.py)?\s{1,4}-i\s|\bkerbrute\s{1,4}(?:userenum|passwordspray|bruteuser)\b|\bbloodhound-python\b|\bmitm6\s{1,4}-d\b|\bchisel\s{1,4}(?:client|server)\b[^\n]{0,120}(?:\bR:|--reverse|socks)/),

  T('tool.ad_attack_cli', 'T1588.002', 'An Active Directory attack tool is run (NetExec/CrackMapExec, Rubeus, Certify/Certipy, enum4linux, SharpHound, Seatbelt, PEAS)', 'credential_access', 'high',
    ['nxc', 'netexec', 'crackmapexec', 'cme ', 'rubeus', 'certify', 'certipy', 'enum4linux', 'sharphound', 'seatbelt', 'winpeas', 'linpeas'],
    /\b(?:nxc|netexec|crackmapexec|cme)\s{1,4}(?:smb|ldap|winrm|mssql|ssh|rdp|wmi|vnc|ftp)\s{1,4}\S{1,120}\s[^\n]{0,200}(?:-u\s|-m\s|-x\s|--sam\b|--lsa\b|--ntds\b|--shares\b|--users\b|--pass-pol\b|--kerberoast|--asreproast|-h\s)|\brubeus(?:\.exe)?\s{1,4}(?:kerberoast|asreproast|asktgt|asktgs|s4u|ptt|dump|tgtdeleg|golden|silver|diamond|monitor|harvest|brute)\b|\bcertify(?:\.exe)?\s{1,4}(?:find|request|cas|download)\b|\bcertipy(?:-ad)?\s{1,4}(?:find|req|auth|shadow|relay|account|forge)\b|\benum4linux(?:-ng)?(?:\.pl|\.py)?\s{1,4}(?:-\w{1,3}\s{1,4}){0,6}(?:-a|-u|-U|-S|-G|-P)\b|\bsharphound(?:\.exe|\.ps1)?\s[^\n]{0,60}(?:-c|--collectionmethods?)\b|\binvoke-bloodhound\b|\bseatbelt(?:\.exe)?\s{1,4}(?:-group=|all\b)|\b(?:winpeas|linpeas)(?:\w{0,10})?(?:\.exe|\.sh|\.bat|\.ps1)\b/),
  T('impact.cryptominer', 'T1496', 'A cryptocurrency miner is run or configured (resource hijacking)', 'impact', 'high', ['xmrig', 'minerd', 'cpuminer', 'xmr-stak', 'stratum+', 'nicehash', 'ethminer', 'nbminer', 't-rex'],
    /\b(?:xmrig|minerd|cpuminer(?:-multi)?|xmr-stak(?:-rx)?|ethminer|nbminer|t-rex)(?:\.exe)?\b[^\n]{0,200}(?:-o\s|--url|-a\s|--algo|--donate-level|-u\s|--user|-p\s|--threads|-c\s|--config|--background|-b\b)|\bstratum\+(?:tcp|ssl|tls):\/\/|\b(?:xmrig|xmr-stak|cpuminer|minerd)[\w.-]{0,40}\.(?:tar\.gz|zip|tgz)\b[^\n]{0,400}(?:\btar\s|expand-archive|unzip)|\b(?:screen|nohup|start-process)\s[^\n]{0,60}\.\/?[\w./-]{0,40}(?:xmrig|minerd|cpuminer)\b/),

  // ---- Hidden accounts, staged downloaders, DDE (T1564.002, T1105, T1559.002) ----
  T('persist.hidden_account', 'T1564.002', 'An account is hidden (name ending in $ or removed from the logon screen)', 'persistence', 'high', ['net user', 'specialaccounts'],
    /\bnet1?\s{1,4}user\s{1,4}["']?[\w.-]{1,40}\$["']?\s[^\n]{0,60}\/add\b|specialaccounts\\{1,2}userlist/),
  T('ingress.staged_downloader', 'T1105', 'A downloader is written line by line (VBScript HTTP object, FTP or TFTP script)', 'command_and_control', 'high', ['xmlhttp', 'winhttp', 'adodb.stream', '-s:', 'tftp'],
    /\becho\s[^\n]{0,200}(?:msxml2\.(?:server)?xmlhttp|microsoft\.xmlhttp|winhttp\.winhttprequest|adodb\.stream)[^\n]{0,200}>>?\s{0,2}["']?\S{1,60}\.(?:vbs|js)\b|\bftp(?:\.exe)?\s[^\n]{0,20}-s:\s{0,2}\S|\btftp(?:\.exe)?\s{1,4}-i\s{1,4}\S{1,100}\s{1,4}get\b/),
  T('exec.dde', 'T1559.002', 'A DDE formula starts a command', 'execution', 'high', ['cmd|', 'cmd |', 'msexcel', 'powershell|', 'powershell |', 'mshta|', 'mshta |'],
    /=\s{0,2}(?:cmd|msexcel|powershell|mshta)\s{0,2}\|\s{0,2}['"]/),

  // ---- Security tools and Office protections switched off (T1562.001) ----
  T('evasion.security_agent', 'T1562.001', 'A security agent, EDR or log shipper is stopped, unloaded or uninstalled', 'defense_evasion', 'high',
    ['falcon', 'cbdaemon', 'carbonblack', 'crowdstrike', 'sentinel', 'cylance', 'sophos', 'mcafee', 'symantec', 'sysmon', 'msmpeng', 'windefend', 'osquery', 'wazuh', 'ossec', 'rsyslog', 'journald', 'syslog', 'backstab', 'defendercontrol', 'mdatp', 'ekrn', 'mpssvc', 'wscsvc', 'wdnissvc', 'securityhealthservice'],
    /(?:\bsystemctl\s{1,4}(?:stop|disable|mask)|\blaunchctl\s{1,4}(?:unload|remove|bootout)|\bsc(?:\.exe)?\s{1,4}(?:stop|delete)|\bnet1?\s{1,4}stop|\btaskkill\b[^\n]{0,40}\/im|\bstop-service|\bremove-service|\bstop-process\b[^\n]{0,20}-name|\b(?:pkill|killall)|\bfltmc(?:\.exe)?\s{1,4}unload|\bstop)\s{1,4}(?:-\w{1,10}\s{1,4}){0,3}["']?(?:falcon-sensor|falcond|cbdaemon|carbonblack|cbagentd|cb\.exe|csagent|csfalconservice|sentinelagent|sentinelone|cylancesvc|sophos\w{0,20}|mcafee\w{0,30}|masvc|sepmasterservice|smcservice|ekrn|mdatp|wdavdaemon|msmpeng(?:\.exe)?|windefend|mpssvc|wscsvc|wdnissvc|securityhealthservice|osqueryd|wazuh-agent|ossec|sysmon(?:64)?(?:drv)?|rsyslog|syslog-ng|systemd-journald|auditbeat|winlogbeat)\b|\b(?:service)\s{1,4}(?:falcon-sensor|cbdaemon|rsyslog|syslog-ng|osqueryd|wazuh-agent|sysmon)\s{1,4}stop\b|\bsysmon(?:64)?(?:\.exe)?\s{1,4}-u\b|\bbackstab(?:64)?(?:\.exe)?\s[^\n]{0,40}-k\b|\bdefendercontrol(?:\.exe)?\s{1,4}\/d\b|\bremove-mppreference\b[^\n]{0,60}-attacksurfacereduction/),
  T('evasion.office_security', 'T1562.001', 'Office macro or protected-view protection, or hypervisor code integrity, is switched off', 'defense_evasion', 'high', ['vbawarnings', 'protectedview', 'inpv', 'accessvbom', 'antiphish', 'hypervisorenforcedcodeintegrity'],
    /\bvbawarnings["']?\s[^\n]{0,60}(?:\/d\s{1,4}1\b|-value\s{1,4}1\b)|\bdisable(?:internetfiles|attachements|attachments|unsafelocations)inpv["']?\s[^\n]{0,60}(?:\/d\s{1,4}1\b|-value\s{1,4}1\b)|\baccessvbom["']?\s[^\n]{0,60}(?:\/d\s{1,4}1\b|-value\s{1,4}1\b)|\bdisable-antiphishrule\b|\\hypervisorenforcedcodeintegrity["']?\s[^\n]{0,60}enabled[^\n]{0,40}(?:\/d\s{1,4}0\b|-value\s{1,4}0\b)/),
  T('c2.dns_txt_exec', 'T1071.004', 'A command fetched from a DNS TXT record is executed', 'command_and_control', 'high', ['nslookup', 'resolve-dnsname', 'dig '],
    /[.&]\s{0,2}\(\s{0,2}nslookup\s[^\n]{0,80}-q(?:uerytype)?=txt|nslookup\s[^\n]{0,80}-q(?:uerytype)?=txt[^\n]{0,120}\|\s{0,4}(?:\biex\b|invoke-expression|cmd|(?:ba)?sh\b)|(?:\biex\b|invoke-expression)[^\n]{0,80}(?:resolve-dnsname\s[^\n]{0,80}-type\s{1,4}txt|nslookup\s[^\n]{0,80}=txt)|\bdig\s[^\n]{0,80}\btxt\b[^\n]{0,80}\|\s{0,4}(?:sudo\s{1,4})?(?:ba)?sh\b/),

  T('exfil.raw_channel', 'T1048.003', 'File contents are sent out over a raw TCP, ICMP or DNS channel', 'command_and_control', 'high', ['telnet', 'nc ', 'ncat', 'netcat', 'ping', 'dig ', 'nslookup', '/dev/tcp/'],
    /(?:\/etc\/(?:passwd|shadow|hosts)|\.ssh\/|\b(?:base64|xxd|gzip\s{1,4}-c)\b)[^\n]{0,100}\|\s{0,4}(?:[^|\n]{0,60}\|\s{0,4})?(?:telnet|nc|ncat|netcat)\s{1,4}(?:-\w{1,3}\s{1,4}){0,3}\S{1,100}\s{1,4}\d{1,5}\b|(?:\/etc\/(?:passwd|shadow)|\bxxd\b|\bbase64\b)[^\n]{0,120}(?:\bdo\s{1,4}|xargs\s[^\n]{0,40})(?:dig|nslookup|host|ping\s[^\n]{0,40}-p)\s[^\n]{0,40}(?:\$\{?\w{1,20}\}?\.|\$\w{1,20}\b|\{\})|\b(?:cat|base64)\s[^\n]{0,60}(?:\/etc\/(?:passwd|shadow)|\.ssh\/)[^\n]{0,60}>\s{0,2}\/dev\/(?:tcp|udp)\//),
  T('evasion.gatekeeper_off', 'T1553.001', 'macOS Gatekeeper is switched off', 'defense_evasion', 'medium', ['spctl'],
    /\bspctl\s{1,4}--(?:master|global)-disable\b/),
  T('evasion.timestomp', 'T1070.006', "A file's creation and modification times are overwritten (timestomping)", 'defense_evasion', 'medium', ['creationtime'],
    /\.creationtime\s{0,2}=\s{0,2}\S[^\n]{0,300}\.(?:lastwritetime|lastaccesstime)\s{0,2}=|\.(?:lastwritetime|lastaccesstime)\s{0,2}=\s{0,2}\S[^\n]{0,300}\.creationtime\s{0,2}=/),

  // ---- Twelfth round (issue 30): shapes from the training split's misses, written from the
  // techniques' public descriptions (ATT&CK, LOLBAS, GTFOBins) ----
  T('cred.security_hive_keys', 'T1003.004', 'LSA secrets or cached domain logons are read from the SECURITY hive', 'credential_access', 'high', ['security\\'],
    // Only SYSTEM can read HKLM\SECURITY: software has no reason to name its secret or cache keys.
    /\b(?:hklm:?|hkey_local_machine)\\{1,2}security\\{1,2}(?:policy\\{1,2}secrets|cache\b|sam\\{1,2}domains)/),
  T('cred.protection_weakened', 'T1112', 'Credential protection is weakened: WDigest keeps cleartext logons, or LSA protection or Credential Guard is switched off', 'credential_access', 'high', ['uselogoncredential', 'runasppl', 'lsacfgflags'],
    // Hardening scripts set these the other way (UseLogonCredential 0, RunAsPPL and LsaCfgFlags 1).
    /\buselogoncredential["']?\s[^\n]{0,60}(?:\/d\s{1,4}(?:0x0{0,7})?1\b|-value\s{1,4}1\b)|\b(?:runasppl|lsacfgflags)["']?\s[^\n]{0,60}(?:\/d\s{1,4}(?:0x0{0,7})?0\b|-value\s{1,4}0\b)/),
  // Also a list of four or more key and certificate-store extensions walked recursively
  // (`foreach ($e in ".key",".pgp",".ppk",".pfx") { Get-ChildItem C:\ -Recurse ... }`).
  keySearch(String.raw`\b(?:grep|egrep|rg|findstr)\b[^\n|;]{0,80}\s(?:-[a-z]{0,5}r[a-z]{0,5}|\/s)\b[^\n|;]{0,80}["']?begin\s(?:(?:rsa|dsa|ec|openssh|encrypted|pgp)\s)?private\b|\b(?:grep|egrep|rg)\b[^\n|;]{0,80}["']?begin\s(?:(?:rsa|dsa|ec|openssh|encrypted|pgp)\s)?private\b[^\n|;]{0,80}\s-[a-z]{0,5}r[a-z]{0,5}\b|\bfind\s{1,4}(?:\/|\/home\/?|\/root\/?|\/users\/?|~\/?)\s[^\n|;]{0,60}-i?name\s{1,4}["']?\*?(?:id_(?:rsa|dsa|ecdsa|ed25519)|\*\.ppk)\b|${KEY_EXTENSIONS}[\s\S]{0,300}?(?:-recurse\b|\s\/s\b)|(?:get-childitem|\bgci|\bls|\bdir)\b[^\n]{0,120}(?:-recurse\b|\s\/s\b)[\s\S]{0,300}?${KEY_EXTENSIONS}`, ['private', 'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519', '.ppk', '.pfx', '.p12', '.pgp']),
  T('tool.powerview_attack', 'T1087.002', 'PowerView looks for attack paths: roastable accounts, delegation, ACLs or SPN tickets', 'credential_access', 'medium', ['get-domain', 'get-net', 'find-interestingdomainacl', 'invoke-aclscanner', 'add-domainobjectacl', 'set-domainobject'],
    // Admins write their own Get-DomainComputer; PowerView's attack options are what tell it apart.
    /\bget-(?:domain|net)(?:user|computer)\b[^\n|;]{0,120}\s-(?:preauthnotrequired|spn|trustedtoauth|unconstrained|allowdelegation|admincount)\b|\bget-domain(?:spnticket|trustmapping|objectacl\b[^\n|;]{0,120}-resolveguids)|\bfind-interestingdomain(?:acl|sharefile)\b|\binvoke-aclscanner\b|\badd-domainobjectacl\b[^\n]{0,160}-rights\s{1,4}["']?(?:all|dcsync|resetpassword|writemembers)|\bset-domainobject\b[^\n]{0,160}-(?:set|xor)\s{1,4}@?\{?[^\n]{0,80}(?:serviceprincipalname|useraccountcontrol|scriptpath|msds-keycredentiallink)/),
  T('tool.offensive_named', 'T1588.002', 'An offensive tool is run by name (coercion, potato and token abuse, PowerUp, PowerUpSQL, LAPS and gMSA readers, relays)', 'execution', 'high',
    ['potam', 'spoolsample', 'sharpup', 'gmsapasswordreader', 'webclientservicescanner', 'wtsimpersonator', 'socksoverrdp', 'powershdll', 'adrecon', 'enablealltokenprivs', 'powerupsql', 'potato', 'printspoofer', 'krbrelayup', 'coerce', 'weevely', 'multirelay', 'runfinger', 'lapspasswords', '-sql', 'spray', 'useraddmsi', 'servicebinary', 'modifiableservice', 'unquotedservice', 'dllhijack', 'alwaysinstallelevated', 'sebackupprivilege', '.py', '.program]'],
    /\b(?:petitpotam|spoolsample|sharpup|gmsapasswordreader|wtsimpersonator|socksoverrdp(?:-server|-plugin)?|powershdll|adrecon|enablealltokenprivs|powerupsql|juicypotato(?:ng)?|roguepotato|sweetpotato|godpotato(?:-net\d)?|efspotato|printspoofer(?:32|64)?|krbrelayup|dfscoerce|shadowcoerce|coercer)\.(?:exe|py|ps1|psd1|psm1|dll)\b|\[(?:rubeus|sharpup|seatbelt|certify|safetykatz|sharpdpapi|sharpkatz|sharphound\d?)\.program\]\s{0,2}::\s{0,2}main(?:string)?\s{0,2}\(|\bweevely(?:\.py)?\s{1,4}(?:generate|https?:|<)|\b(?:multirelay|runfinger)(?:\.py)?\s{1,4}-[ti]\s|\bwebclientservicescanner(?:\.py)?\s|\bgmsapasswordreader(?:\.exe)?\s{1,4}--accountname\b|\b(?:get-lapspasswords|get-sqlserverlinkcrawl|get-sqlinstancedomain|invoke-sqlaudit|invoke-sqlescalatepriv|invoke-sqloscmd|invoke-sprayemptypassword|invoke-domainpasswordspray|write-useraddmsi|write-servicebinary|install-servicebinary|get-modifiableservice(?:file)?|get-unquotedservice|find-pathdllhijack|get-registryalwaysinstallelevated|set-sebackupprivilege|copy-filesebackupprivilege)\b|\b(?:impacket-)?(?:samrdump|rpcdump|getarch|getadusers|finddelegation|dacledit|owneredit|smbrelayx|raisechild|goldenpac)\.py\s[^\n]{0,60}(?:[^\s/@]{1,64}\/[^\s:@]{1,64}(?::[^\s@]{0,64})?@|-target\s|-hashes\s|-h\s)/),
  T('exec.editor_shell_escape', 'T1059.004', 'An editor or archiver is made to run a shell (GTFOBins escape)', 'execution', 'medium', ['-c', '--unzip-command'],
    /\b(?:vim?|nvim|view|vimdiff|rvim)\s[^\n]{0,60}-c\s{0,2}["']:?\s{0,2}!\s{0,2}(?:\/bin\/|\/usr\/bin\/)?(?:ba|da|z)?sh\b|--unzip-command[= ]\s{0,2}["']?(?:\/bin\/)?(?:ba|da)?sh\s{1,2}-c\b/),
  T('privesc.sudo_uid_bypass', 'T1548.003', 'sudo is given user id -1 to run as root despite a deny rule', 'privilege_escalation', 'high', ['sudo'],
    /\bsudo\s{1,4}(?:-\w{1,4}\s{1,4}){0,2}-u\s{0,2}["']?#\s{0,2}(?:-1|4294967295)\b/),
  T('evasion.unix_log_clear', 'T1070.002', 'Linux or macOS system logs are erased', 'defense_evasion', 'high', ['log erase', '/var/log', '*.log'],
    /\blog\s{1,4}erase\s{1,4}--(?:all|ttl)\b|\brm\s{1,4}(?:-[a-z]{0,5}\s{1,4}){0,2}-[a-z]{0,4}r[a-z]{0,4}\s{1,4}(?:-[a-z]{1,5}\s{1,4})?["']?\/var\/log\/?(?:\*|["']?(?:\s|;|&|\||$))|\b(?:shred|srm|wipe)\s[^\n]{0,40}\/var\/log\/|\bfind\s{1,4}\/\s[^\n]{0,60}-i?name\s{1,4}["']?\*\.log["']?\s[^\n]{0,40}(?:-delete\b|-exec\s{1,4}(?:\/bin\/)?rm\b)|(?:^|[;&|]\s{0,2})(?:cat\s{1,4}\/dev\/null\s{0,2}|echo\s{0,4}(?:["']{2})?\s{0,2}|truncate\s{1,4}-s\s{0,2}0\s{1,4})>?\s{0,2}["']?\/var\/log\/(?:wtmp|btmp|lastlog|auth\.log|secure|utmp)\b/m),
  near(300, T('evasion.lolbin_copy_user', 'T1036.003', 'A system script host or shell is copied into a user or temp folder', 'defense_evasion', 'medium', ['system32\\', 'syswow64\\'],
    /(?:copyfile|\bcopy|copy-item|\bcp|\bxcopy)\s{0,2}\(?\s{0,4}["']?(?:c:|%windir%|%systemroot%|\$env:windir|\$env:systemroot)\\{1,2}windows\\{1,2}(?:system32|syswow64)\\{1,2}(?:wscript|cscript|mshta|cmd|powershell|rundll32|regsvr32|certutil)\.exe|(?:copyfile|\bcopy|copy-item|\bcp|\bxcopy)\s{0,2}\(?\s{0,4}["']?(?:%windir%|%systemroot%|\$env:windir|\$env:systemroot)\\{1,2}(?:system32|syswow64)\\{1,2}(?:wscript|cscript|mshta|cmd|powershell|rundll32|regsvr32|certutil)\.exe/,
    new RegExp(String.raw`${TEMP}|%localappdata%|\$env:localappdata|localappdata`))),
  T('lolbin.proxy_user_file_dev', 'T1218', 'A signed developer, App-V or setup tool runs or unpacks a file from a temp or public folder', 'defense_evasion', 'medium',
    ['appvlp', 'csi', 'rcsi', 'dnx', 'fsi', 'mftrace', 'openconsole', 'vstest.console', 'winfile', 'wfc', 'colorcpl', 'diantz', 'te.exe', 'msiexec', 'update'],
    new RegExp(String.raw`\b(?:appvlp|csi|rcsi|dnx|fsi|fsianycpu|mftrace|openconsole|vstest\.console|winfile|wfc|colorcpl|diantz|te\.exe)(?:\.exe)?\s[^\n]{0,200}${TEMP}|\bmsiexec(?:\.exe)?\s{1,4}\/[yz]\s{0,4}["']?[^\s"']{0,20}${TEMP}|\bupdate(?:\.exe)?\s{1,4}--(?:update|updaterollback|processstart)\s{0,2}=\s{0,2}["']?[^\s"']{0,20}${TEMP}`)),
  T('lolbin.com_or_auth_proxy', 'T1218', 'A signed Windows binary runs a COM object or a DLL, or forces NTLM authentication to a host (xwizard, verclsid, control, rpcping)', 'defense_evasion', 'medium', ['xwizard', 'verclsid', 'control', 'rpcping'],
    /\bxwizard(?:\.exe)?\s{1,4}runwizard\b[^\n]{0,40}\{[0-9a-f-]{36}\}|\bverclsid(?:\.exe)?\s[^\n]{0,20}\/c\s{1,4}\{?[0-9a-f-]{36}|(?:\bcontrol\.exe|(?:^|[;&|]\s{0,2})control)\s{1,4}["']?[^\s"',]{1,200}\.dll\b|\brpcping(?:\.exe)?\s[^\n]{0,80}[-/]u\s{1,4}ntlm\b/m),
  T('lolbin.electron_cmd_prefix', 'T1218.015', 'A Chromium or Electron app is given a launcher prefix that starts a shell or a temp-folder program', 'defense_evasion', 'medium', ['gpu-launcher', 'cmd-prefix', 'browser-subprocess-path'],
    // Browser developers prefix renderers with a debugger (`gdb --args`): a shell or a temp program is not that.
    new RegExp(String.raw`--(?:gpu-launcher|utility-cmd-prefix|renderer-cmd-prefix|browser-subprocess-path)\s{0,2}=\s{0,2}(?:["']|%22)?(?:(?:cmd|powershell|pwsh|mshta|rundll32|calc)(?:\.exe)?\b|/bin/(?:ba|da|z)?sh\b|[^\s"']{0,20}${TEMP})`)),

  // ---- Discovery: one command is routine, a run of them is reconnaissance ----
  atLeast(4, T('discovery.chain', 'T1082', 'Several host and domain discovery commands in a row', 'execution', 'medium', ['whoami', 'net ', 'nltest', 'systeminfo', 'ipconfig', 'sudo -l', 'perm', 'getcap', 'arp', 'tasklist', 'quser', 'netstat'],
    /\bwhoami(?:\.exe)?\s{1,4}\/(?:all|priv|groups)\b/, /\bnet1?\s{1,4}(?:user|group|localgroup|accounts)\b[^\n]{0,60}(?:\/domain|administrators|domain admins)/, /\bnltest(?:\.exe)?\s{1,4}\/(?:dclist|domain_trusts|dsgetdc)/,
    /\bsysteminfo\b/, /\bipconfig\s{1,4}\/all\b/, /\bnetstat\s{1,4}-a?no?\b/, /\btasklist(?:\.exe)?\s{1,4}\/(?:svc|v)\b/, /\barp\s{1,4}-a\b/, /\b(?:quser|query\s{1,4}user)\b/, /\bnet1?\s{1,4}(?:view|share|session)\b/,
    /\bsudo\s{1,4}-l\b/, /\bfind\s{1,4}\/\s[^\n]{0,40}-perm\s{1,4}(?:-[24]000|-u=s|\/[46]000)/, /\bgetcap\s{1,4}-r\s{1,4}\//, /\bcat\s{1,4}\/etc\/(?:passwd|issue|os-release)\b/, /\buname\s{1,4}-a\b/)),
];

const RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

const HTTPS_NAMED = /https:\/\/[a-z][a-z0-9-]{0,62}(?:\.[a-z0-9-]{1,63}){1,8}/;
const SHADY = new RegExp(SHADY_URL);
/**
 * Whether every download the text names is from a named HTTPS host: at least one `https://name`
 * and no bare IP, plain http, tunnel or paste site anywhere. That is how vendors publish
 * installers (`iex (irm https://aka.ms/install-powershell.ps1)`, Chocolatey, Scoop), so a cradle
 * seen as written in such a text is a capability to review (medium), not an attack on its own.
 */
export function vendorDownload(view: string): boolean {
  return HTTPS_NAMED.test(view) && !SHADY.test(view);
}
/** Rules softened to medium on a vendor download (seen as written, not through obfuscation). */
const VENDOR_SOFTENED = new Set(['cradle.powershell', 'cradle.download_run']);
export const VENDOR_REASON = 'The code comes from a named HTTPS host, as vendors publish installers: a capability to review, not an attack on its own.';

function excerptOf(view: string, re: RegExp): string {
  const m = re.exec(view);
  if (!m) return '';
  return view.slice(Math.max(0, m.index - 20), Math.min(view.length, m.index + m[0].length + 20)).replace(/\s+/g, ' ').slice(0, 200);
}

/**
 * The others of `all` within `chars` of a match of the first. Windows that
 * overlap are merged, so no character is read more than once per pattern whatever the count.
 */
function nearMatch(all: RegExp[], chars: number, text: string): string | undefined {
  const [anchor, ...rest] = all;
  const first = new RegExp(anchor.source, `${anchor.flags.replace('g', '')}g`);
  let window: { from: number; to: number } | undefined;
  const check = (w: { from: number; to: number }): boolean => {
    const around = text.slice(w.from, w.to);
    return rest.every((re) => re.test(around));
  };
  for (const m of text.matchAll(first)) {
    const from = Math.max(0, m.index - chars);
    const to = m.index + m[0].length + chars;
    if (window && from <= window.to) {
      window.to = to;
      continue;
    }
    if (window && check(window)) return excerptOf(text.slice(window.from, window.to), anchor);
    window = { from, to };
  }
  return window && check(window) ? excerptOf(text.slice(window.from, window.to), anchor) : undefined;
}

/** All rules' needles in one automaton. */
const NEEDLES = new NeedleGate(TECHNIQUE_RULES);

/** The rule's patterns on a view in which one of its needles occurs (`needlesIn`: NEEDLES.in of the view). */
function matchRule(rule: TechniqueRule, view: ScriptView, needlesIn: (rule: TechniqueRule) => boolean): string | undefined {
  if (!needlesIn(rule)) return undefined;
  if (rule.atLeast !== undefined) {
    const seen = rule.all.filter((re) => re.test(view.text));
    return seen.length >= rule.atLeast ? excerptOf(view.text, seen[0]) : undefined;
  }
  if (rule.near !== undefined) return nearMatch(rule.all, rule.near, view.text);
  for (const re of rule.all) {
    re.lastIndex = 0;
    if (!re.test(view.text)) return undefined;
  }
  return excerptOf(view.text, rule.all[0]);
}

/**
 * Technique hits over every view of the text; one hit per rule (the first view that shows it).
 * Dual-use rules stay low unless another offensive technique (high or critical, not dual) fired.
 */
export function analyzeTechniques(text: string): TechniqueHit[] {
  const views = scriptViews(text).map((v) => ({ via: v.via, text: withoutWordLists(v.text) }));
  const needlesIn = views.map((v) => NEEDLES.in(v.text));
  const hits: TechniqueHit[] = [];
  for (const rule of TECHNIQUE_RULES) {
    for (const [i, view] of views.entries()) {
      const excerpt = matchRule(rule, view, needlesIn[i]);
      if (excerpt === undefined) continue;
      hits.push({ rule, severity: rule.severity, via: view.via, excerpt });
      break;
    }
  }
  // A shady pipe-to-shell subsumes the installer-idiom one.
  const shady = hits.some((h) => h.rule.id === 'cradle.shell_pipe_shady');
  const kept = shady ? hits.filter((h) => h.rule.id !== 'cradle.shell_pipe') : hits;
  if (vendorDownload(views[0].text)) {
    for (const h of kept) {
      if (VENDOR_SOFTENED.has(h.rule.id) && h.via === 'plain') {
        h.severity = 'medium';
        h.softened = VENDOR_REASON;
      }
    }
  }
  const offensive = kept.some((h) => !h.rule.dual && RANK[h.severity] >= RANK.high);
  for (const h of kept) if (h.rule.dual) h.severity = offensive ? 'high' : 'low';
  return kept;
}

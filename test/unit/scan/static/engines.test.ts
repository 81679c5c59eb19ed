/**
 * Each static engine fires on its crafted fixtures with the expected finding ids and severities.
 * Fixtures come from test/fixtures/scripts/make-static-fixtures.ts (needs gcc for the ELF ones).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as CFB from 'cfb';
import { engine as pe, parsePe } from '../../../../src/scan/engines/pe';
import { engine as elf, parseElf } from '../../../../src/scan/engines/elf';
import { engine as office, decompressOvba, extractVba } from '../../../../src/scan/engines/office';
import { engine as pdf } from '../../../../src/scan/engines/pdf';
import { engine as script, analyzeScriptText } from '../../../../src/scan/engines/script';
import { engine as behavior } from '../../../../src/scan/engines/behavior';
import { engine as ml, CONFIDENCE_CAP } from '../../../../src/scan/engines/ml';
import { compressOvba } from '../../../fixtures/scripts/make-static-fixtures';
import { ensureFixtures, ids, run, subject } from './helpers';

let dir = '';
beforeAll(() => {
  dir = ensureFixtures();
});

const sev = async (e: Parameters<typeof run>[0], f: string, t: Parameters<typeof run>[2], id: string): Promise<string | undefined> =>
  (await run(e, f, t)).findings.find((x) => x.id === id)?.severity;

describe('static_pe', () => {
  it('parses the crafted PE import table as DLL!function', () => {
    const info = parsePe(fs.readFileSync(path.join(dir, 'pe_injection.exe')));
    expect(info).not.toBeNull();
    expect(info?.importNames).toEqual(expect.arrayContaining(['kernel32.dll!VirtualAllocEx', 'kernel32.dll!WriteProcessMemory', 'kernel32.dll!CreateRemoteThread', 'user32.dll!SetWindowsHookExW']));
    expect(parsePe(fs.readFileSync(path.join(dir, 'pe_future_ts64.exe')))?.is64).toBe(true);
  });
  it('is quiet on the crafted benign PE', async () => {
    expect(await ids(pe, 'pe_benign.exe', 'pe')).toEqual([]);
  });
  it('flags UPX-like packing: low for the section names, medium only with several traits', async () => {
    const out = await run(pe, 'pe_upx_packed.exe', 'pe');
    const got = Object.fromEntries(out.findings.map((f) => [f.id, f.severity]));
    expect(got).toMatchObject({ 'pe.packer.upx': 'low', 'pe.section.high_entropy': 'low', 'pe.section.wx': 'low', 'pe.imports.tiny_packed': 'medium', 'pe.packed': 'medium' });
    expect(out.findings.every((f) => f.severity !== 'high' && f.severity !== 'critical')).toBe(true);
  });
  it('reports overlay, .NET, timestamps and certificate presence', async () => {
    expect(await ids(pe, 'pe_overlay.exe', 'pe')).toContain('pe.overlay');
    expect(await ids(pe, 'pe_dotnet.exe', 'pe')).toEqual(['pe.dotnet']);
    expect(await ids(pe, 'pe_signed_zero_ts.exe', 'pe')).toEqual(expect.arrayContaining(['pe.timestamp.zero', 'pe.signature.present']));
    expect(await ids(pe, 'pe_future_ts64.exe', 'pe')).toEqual(['pe.timestamp.future']);
  });
  it('survives truncated and garbage headers', async () => {
    const b = fs.readFileSync(path.join(dir, 'pe_injection.exe'));
    for (const cut of [64, 0x90, 0x180, 0x300, 0x500, b.length - 100]) {
      const out = await pe.scan({ ...(await import('./helpers')).subject(b.subarray(0, cut), 'pe') }, { signal: new AbortController().signal, budgetMs: 1000 });
      expect(Array.isArray(out.findings)).toBe(true);
    }
  });
});

describe('static_elf', () => {
  it('reads interpreter, needed libraries and imported symbols', () => {
    const info = parseElf(fs.readFileSync(path.join(dir, 'elf_traits_dynamic')));
    expect(info?.interpreter).toMatch(/ld-linux/);
    expect(info?.needed).toContain('libc.so.6');
    expect(info?.importedSymbols).toEqual(expect.arrayContaining(['ptrace', 'connect', 'dup2', 'execve']));
  });
  it('stripped is info, static+stripped is low, the benign build is quiet', async () => {
    expect(await sev(elf, 'elf_traits_stripped', 'elf', 'elf.stripped')).toBe('info');
    expect(await sev(elf, 'elf_traits_static', 'elf', 'elf.static_stripped')).toBe('low');
    expect(await ids(elf, 'elf_benign', 'elf')).toEqual([]);
  });
  it('flags the UPX-like packed layout (marker, no sections, RWX, entropy) as medium at most', async () => {
    const out = await run(elf, 'elf_packed_like', 'elf');
    const got = Object.fromEntries(out.findings.map((f) => [f.id, f.severity]));
    expect(got).toMatchObject({ 'elf.packer.upx': 'low', 'elf.no_sections': 'low', 'elf.segment.wx': 'low', 'elf.section.high_entropy': 'low', 'elf.packed': 'medium' });
  });
});

describe('static_office', () => {
  it('MS-OVBA compression round-trips through the decompressor', () => {
    const src = Buffer.from('Attribute VB_Name = "M"\r\n'.repeat(300) + 'Sub AutoOpen()\r\nEnd Sub\r\n', 'latin1');
    expect(decompressOvba(compressOvba(src)).equals(src)).toBe(true);
  });
  it('extracts VBA source from the OLE .doc', () => {
    const c = CFB.read(fs.readFileSync(path.join(dir, 'doc_macro_autoopen.doc')), { type: 'buffer' });
    const mods = extractVba(c);
    expect(mods.map((m) => m.name)).toEqual(['ThisDocument']);
    expect(mods[0].source).toContain('Sub AutoOpen()');
  });
  it('AutoOpen + Shell in OLE and Document_Open in OOXML are high', async () => {
    for (const [f, t] of [['doc_macro_autoopen.doc', 'office_ole'], ['docm_macro_autoopen.docm', 'office_ooxml']] as const) {
      const got = await ids(office, f, t);
      expect(got).toEqual(expect.arrayContaining(['office.macro.present', 'office.macro.autoexec', 'office.macro.suspicious_call', 'office.macro.autoexec_exec']));
    }
  });
  it('a harmless macro is only low; a clean docx is quiet', async () => {
    expect((await run(office, 'doc_macro_benign.doc', 'office_ole')).findings.map((f) => `${f.id}:${f.severity}`)).toEqual(['office.macro.present:low']);
    expect(await ids(office, 'docx_clean.docx', 'office_ooxml')).toEqual([]);
  });
  it('remote template and DDEAUTO are high', async () => {
    expect(await sev(office, 'docx_external_template.docx', 'office_ooxml', 'office.external_template')).toBe('high');
    expect(await sev(office, 'docx_dde.docx', 'office_ooxml', 'office.dde')).toBe('high');
  });
});

describe('static_pdf', () => {
  it.each([
    ['pdf_openaction_js.pdf', ['pdf.javascript', 'pdf.auto_javascript', 'pdf.js.suspicious', 'pdf.openaction']],
    ['pdf_launch.pdf', ['pdf.launch']],
    ['pdf_flate_objstm_js.pdf', ['pdf.javascript', 'pdf.auto_javascript', 'pdf.js.suspicious', 'pdf.objstm', 'pdf.aa']],
    ['pdf_obfuscated_names.pdf', ['pdf.obfuscated_names', 'pdf.auto_javascript']],
    ['pdf_embedded_exe.pdf', ['pdf.embedded_executable']],
  ])('%s', async (file, expected) => {
    expect(await ids(pdf, file, 'pdf')).toEqual(expect.arrayContaining(expected));
  });
  it('a clean PDF has only info findings', async () => {
    const out = await run(pdf, 'pdf_clean.pdf', 'pdf');
    expect(out.findings.every((f) => f.severity === 'info')).toBe(true);
  });
});

describe('static_script', () => {
  it.each([
    ['ps_download_exec.ps1', 'powershell', 'script.download_execute.powershell'],
    ['ps_encoded.ps1', 'powershell', 'script.encoded_command'],
    ['ps_frombase64_exec.ps1', 'powershell', 'script.frombase64.exec'],
    ['ps_persistence.ps1', 'powershell', 'script.persistence.run_key'],
    ['ps_persistence.ps1', 'powershell', 'script.persistence.schtasks'],
    ['ps_reverse_shell.ps1', 'powershell', 'script.reverse_shell.powershell'],
    ['ps_amsi.ps1', 'powershell', 'script.evasion.amsi_bypass'],
    ['sh_curl_pipe.sh', 'shell', 'script.download_execute.pipe_shell'],
    ['sh_reverse_shell.sh', 'shell', 'script.reverse_shell.dev_tcp'],
    ['sh_persistence.sh', 'shell', 'script.persistence.cron'],
    ['sh_persistence.sh', 'shell', 'script.persistence.systemd'],
    ['sh_persistence.sh', 'shell', 'script.persistence.shell_profile'],
    ['sh_netcat.sh', 'shell', 'script.reverse_shell.netcat'],
    ['bat_certutil.bat', 'batch', 'script.download_execute.certutil'],
    ['bat_certutil.bat', 'batch', 'script.impact.shadow_delete'],
    ['js_charcode.js', 'javascript', 'script.obfuscation.charcode'],
    ['js_wsh_download.js', 'javascript', 'script.download_execute.com'],
    ['vbs_shell.vbs', 'vbscript', 'script.wsh.shell_run'],
    ['py_reverse_shell.py', 'python', 'script.reverse_shell.python'],
    ['py_download_exec.py', 'python', 'script.download_execute.python'],
    ['html_hidden_iframe.html', 'html', 'script.html.hidden_iframe'],
  ] as const)('%s -> %s', async (file, type, id) => {
    expect(await ids(script, file, type)).toContain(id);
  });
  it('finds download-and-execute inside the -enc payload after decoding it', async () => {
    const out = await run(script, 'ps_encoded.ps1', 'powershell');
    const f = out.findings.find((x) => x.id === 'script.download_execute.powershell');
    expect(f?.description).toMatch(/base64-decoded/);
  });
  it.each([['benign_build.sh', 'shell'], ['benign_util.py', 'python'], ['benign_app.js', 'javascript'], ['benign_admin.ps1', 'powershell']] as const)('benign %s is quiet', async (f, t) => {
    expect(await ids(script, f, t)).toEqual([]);
  });
  it('a table keyed by chr(N) or bytes above ASCII are data; strings spelled from chr(N) calls are obfuscation (issue 30)', async () => {
    const widths = Array.from({ length: 256 }, (_, i) => `chr(${i})=>${500 + (i % 7) * 10}`).join(',');
    const table = `<?php\nclass Font {\n    public function getWidths() {\n        return array(${widths});\n    }\n}\n`;
    const scan = async (text: string) => (await script.scan(subject(Buffer.from(text), 'php', 'font.php'), { signal: new AbortController().signal, budgetMs: 10_000 })).findings.map((f) => f.id);
    expect(await scan(table)).not.toContain('script.obfuscation.charcode');
    // Doctrine's Inflector: the Latin-1 letters it unaccents, as bytes nobody could type.
    const latin1 = `<?php\n$characters['in'] = ${Array.from({ length: 64 }, (_, i) => `chr(${192 + i})`).join('\n    . ')};\n`;
    expect(await scan(latin1)).not.toContain('script.obfuscation.charcode');
    const built = `<?php\n$f = ${Array.from('system($_GET[1]);assert($x);', (c) => `chr(${c.charCodeAt(0)})`).join('.')};\n$f();\n`;
    expect(await scan(built)).toContain('script.obfuscation.charcode');
    const hex = `$c = ${Array.from('Invoke-Expression (New-Object Net.WebClient)', (c) => `[char]0x${c.charCodeAt(0).toString(16)}`).join('+')}\n`;
    expect(analyzeScriptText(hex).stats.charCodeCalls).toBe(44);
    expect(analyzeScriptText('$k = 7\n$s = Chr(111 Xor $k) & Chr(98 Xor $k)\n').stats.charCodeCalls).toBe(2);
  });
  it('PHP is read as a script: a web shell in a php file is found', async () => {
    const out = await script.scan(subject(Buffer.from('<?php\nif (isset($_POST["c"])) { system($_POST["c"]); }\n'), 'php', 'shell.php'), { signal: new AbortController().signal, budgetMs: 10_000 });
    expect(out.findings.map((f) => f.id)).toContain('script.technique.webshell.php');
  });
  // A pattern with catastrophic backtracking would not finish before the test's timeout.
  it('finishes on hostile input built to make patterns backtrack', () => {
    const hostile = `${'curl '.repeat(20000)}${'IEX '.repeat(20000)}${'A'.repeat(199).concat(' ').repeat(2000)}${'/dev/tcp/'.repeat(5000)}`;
    expect(analyzeScriptText(hostile).stats.length).toBe(hostile.length);
  });
});

describe('behavior', () => {
  it('infers injection, credential access, keylogging and C2 from the crafted PE', async () => {
    const out = await run(behavior, 'pe_injection.exe', 'pe');
    const got = Object.fromEntries(out.findings.map((f) => [f.id, f.severity]));
    expect(got).toMatchObject({ 'behavior.injection.remote_thread': 'high', 'behavior.credential.lsass': 'high', 'behavior.keylogging.hook': 'medium', 'behavior.c2.hardcoded_ip': 'low', 'behavior.persistence.run_key': 'medium', 'behavior.anti_analysis.vm': 'low' });
    expect(out.report?.executed).toBe(false);
  });
  it('infers reverse shell, ptrace injection and cron persistence from the gcc-built ELF', async () => {
    expect(await ids(behavior, 'elf_traits_stripped', 'elf')).toEqual(expect.arrayContaining(['behavior.c2.reverse_shell', 'behavior.injection.ptrace', 'behavior.persistence.cron', 'behavior.multiple_capabilities']));
  });
  it('on scripts: appending to a start-up file is low (dual-use); reading the SAM domain key for the machine SID is not hash access', async () => {
    const scan = async (text: string, type: 'shell' | 'powershell') => (await behavior.scan(subject(Buffer.from(text), type), { signal: new AbortController().signal, budgetMs: 10_000 })).findings;
    const profile = await scan('echo \'eval "$(tool completion)"\' >> ~/.bashrc\n', 'shell');
    expect(profile.find((f) => f.id === 'behavior.persistence.shell_profile')?.severity).toBe('low');
    expect(await scan('$key = Get-Item "HKLM:\\SAM\\SAM\\Domains\\Account"\n$sid = $key.GetValue("V")\n', 'powershell')).toEqual([]);
    expect((await scan('reg query HKLM\\SAM\\SAM\\Domains\\Account\\Users /s\n', 'powershell')).map((f) => f.id)).toContain('behavior.credential.sam');
  });
  it('is quiet on the benign builds', async () => {
    expect(await ids(behavior, 'elf_benign', 'elf')).toEqual([]);
    expect(await ids(behavior, 'pe_benign.exe', 'pe')).toEqual([]);
  });
});

describe('ml', () => {
  it('scores the crafted trait-carrying binaries as suspicious, capped at medium and the confidence cap', async () => {
    for (const [f, t] of [['pe_injection.exe', 'pe'], ['elf_traits_dynamic', 'elf']] as const) {
      const out = await run(ml, f, t);
      expect(out.findings).toHaveLength(1);
      expect(out.findings[0].severity).toBe('medium');
      expect(out.findings[0].confidence).toBeLessThanOrEqual(CONFIDENCE_CAP);
    }
  });
  it('stays below threshold for the benign builds and says when content is out of scope', async () => {
    expect(await ids(ml, 'elf_benign', 'elf')).toEqual([]);
    expect(await ids(ml, 'pe_benign.exe', 'pe')).toEqual([]);
    // Other formats get the script-text model, on a document's printable strings.
    const pdfOut = await run(ml, 'pdf_clean.pdf', 'pdf');
    expect((pdfOut.report as { ml: { input: string } }).ml.input).toBe('printable strings');
    expect(pdfOut.findings.every((f) => f.severity === 'low')).toBe(true);
  });
});

describe('script engine: hidden iframes', () => {
  const ids = (text: string): string[] => analyzeScriptText(text).findings.map((f) => f.id);
  it("a library's own empty hidden frame is not an injection; one that loads a page from elsewhere is", () => {
    // jQuery 1.x measures default display styles in a zero-size frame; upload widgets post into a hidden one.
    expect(ids(`iframe = (iframe || jQuery("<iframe frameborder='0' width='0' height='0'/>")).appendTo(doc.documentElement);`)).not.toContain('script.html.hidden_iframe');
    expect(ids('form.target = id; body.append(\'<iframe id="\' + id + \'" name="\' + id + \'" src="javascript:&quot;&quot;" style="display:none"></iframe>\');')).not.toContain('script.html.hidden_iframe');
    expect(ids('<iframe src="http://198.51.100.7/x" width="0" height="0" frameborder="0"></iframe>')).toContain('script.html.hidden_iframe');
    expect(ids('document.write(\'<iframe src="\' + u + \'" style="visibility:hidden"></iframe>\');')).toContain('script.html.hidden_iframe');
    expect(ids('document.write("<iframe src=\\"//ads.example/x\\" width=0 height=0></iframe>");')).toContain('script.html.hidden_iframe');
  });
});

describe('script engine: markup written from escapes', () => {
  const ids = (text: string): string[] => analyzeScriptText(text).findings.map((f) => f.id);
  it('a literal in escapes is hidden markup; a template encoding a variable at run time is not', () => {
    expect(ids('<script>document.write(unescape("%3Ciframe%20src%3D%22http%3A//x%22%3E"));</script>')).toContain('script.html.document_write_unescape');
    expect(ids('<script>document.write(atob("PGlmcmFtZSBzcmM9Imh0dHA6Ly94Ij4="));</script>')).toContain('script.html.document_write_unescape');
    expect(ids("return '<script type=\"text/javascript\">document.write(unescape(\\'' . $js_encode . '\\'))</script>';")).not.toContain('script.html.document_write_unescape');
    expect(ids('<script>document.write(unescape(\\"$obfusData\\" ) );</script>')).not.toContain('script.html.document_write_unescape');
  });
});

describe('script engine: PowerShell tick escapes', () => {
  // Tagged template literals put letters on both sides of backticks, a dozen times in styled code.
  const js = Buffer.from(Array.from({ length: 12 }, (_, i) => `const s${i} = css\`color\` + css\`margin\`;`).join('\n'));
  const ps = Buffer.from(Array.from({ length: 12 }, () => 'I`E`X (N`ew-Ob`ject Net.WebClient)').join('\n'));

  it('count in PowerShell, not in JavaScript template literals', async () => {
    const { subject } = await import('./helpers');
    const ctx = { signal: new AbortController().signal, budgetMs: 1000 };
    const jsIds = (await script.scan(subject(js, 'javascript'), ctx)).findings.map((f) => f.id);
    const psIds = (await script.scan(subject(ps, 'powershell'), ctx)).findings.map((f) => f.id);
    expect(analyzeScriptText(js.toString()).stats.psTicks).toBeGreaterThanOrEqual(10);
    expect(jsIds).not.toContain('script.obfuscation.backtick');
    expect(psIds).toContain('script.obfuscation.backtick');
  });

  // Uzbek Latin writes its apostrophe letters with a backtick (a Roundcube-style labels file).
  const uz = Array.from({ length: 12 }, (_, i) => `$labels['l${i}'] = 'O\`zbekiston ko\`rish bo\`lim';`).join('\n');
  it('do not count in PHP strings, while the backtick shell operator still reads as a web shell', async () => {
    const ctx = { signal: new AbortController().signal, budgetMs: 1000 };
    const phpIds = async (text: string): Promise<string[]> => (await script.scan(subject(Buffer.from(text), 'php', 'labels.inc'), ctx)).findings.map((f) => f.id);
    expect(analyzeScriptText(uz).stats.psTicks).toBeGreaterThanOrEqual(10);
    expect(await phpIds(`<?php\n${uz}\n`)).not.toContain('script.obfuscation.backtick');
    expect((await script.scan(subject(Buffer.from(uz), 'powershell'), ctx)).findings.map((f) => f.id)).toContain('script.obfuscation.backtick');
    expect(await phpIds('<?php echo `$_GET[cmd]`; ?>\n')).toContain('script.technique.webshell.php');
  });

  // Generated Python (plotly's validators) quotes names in reStructuredText: `color`s and `layout`axis`.
  const py = Array.from({ length: 12 }, (_, i) => `    # Sets the \`color\`s of trace ${i}; see \`layout\`axis\` for the \`font\`size\`.`).join('\n');
  it('do not count in Python or shell unless the file hands a command to PowerShell', async () => {
    const ctx = { signal: new AbortController().signal, budgetMs: 1000 };
    const ids = async (text: string, type: 'python' | 'shell' | 'batch'): Promise<string[]> => (await script.scan(subject(Buffer.from(text), type), ctx)).findings.map((f) => f.id);
    expect(analyzeScriptText(py).stats.psTicks).toBeGreaterThanOrEqual(10);
    expect(await ids(`def f():\n${py}\n    pass\n`, 'python')).not.toContain('script.obfuscation.backtick');
    expect(await ids(`#!/bin/sh\n${py}\n`, 'shell')).not.toContain('script.obfuscation.backtick');
    // A launcher that passes tick-obfuscated code to PowerShell still counts.
    const launcher = `@echo off\n${Array.from({ length: 12 }, () => 'powershell -c "I`E`X (N`ew-Ob`ject Net.WebClient)"').join('\n')}\n`;
    expect(await ids(launcher, 'batch')).toContain('script.obfuscation.backtick');
    expect(await ids(`import subprocess\nsubprocess.run(["powershell", "-c", """${ps.toString()}"""])\n`, 'python')).toContain('script.obfuscation.backtick');
  });
});

import { identify, TYPE_INFO } from '../../../src/scan/filetype';
import { FILE_TYPES } from '../../../src/scan/types';
import { classFile, makeJar, makeTar, makeZip } from '../../fixtures/scripts/make-corpus';
import zlib from 'node:zlib';

function pe(opts: { dotnet?: boolean; pe32plus?: boolean; dll?: boolean } = {}): Buffer {
  const b = Buffer.alloc(0x200);
  b.write('MZ', 0, 'latin1');
  b.writeUInt32LE(0x80, 0x3c);
  b.write('PE\0\0', 0x80, 'latin1');
  b.writeUInt16LE(opts.pe32plus ? 0x8664 : 0x14c, 0x84);
  b.writeUInt16LE(opts.dll ? 0x2002 : 0x0002, 0x96);
  const opt = 0x98;
  b.writeUInt16LE(opts.pe32plus ? 0x20b : 0x10b, opt);
  const clr = opt + (opts.pe32plus ? 112 : 96) + 14 * 8;
  if (opts.dotnet) { b.writeUInt32LE(0x2008, clr); b.writeUInt32LE(0x48, clr + 4); }
  return b;
}

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s/g, ''), 'hex');
const withPad = (head: Buffer, n = 64): Buffer => Buffer.concat([head, Buffer.alloc(n)]);

describe('identify: binary formats from magic bytes and structure', () => {
  const cases: Array<[string, Buffer, string, Record<string, unknown>?]> = [
    ['PE32', pe(), 'pe', { machine: 'x86' }],
    ['PE32+ DLL', pe({ pe32plus: true, dll: true }), 'pe', { machine: 'x64', dll: true }],
    ['.NET PE', pe({ dotnet: true }), 'pe', { dotnet: true }],
    ['.NET PE32+', pe({ dotnet: true, pe32plus: true }), 'pe', { dotnet: true }],
    ['ELF64', withPad(hex('7f454c46 02 01 01 00')), 'elf', { bits: 64 }],
    ['Mach-O 64 LE', withPad(hex('cffaedfe 07000001')), 'macho', { bits: 64 }],
    ['Mach-O 32 BE', withPad(hex('feedface 00000007')), 'macho', { bits: 32 }],
    ['Mach-O fat (2 archs)', withPad(hex('cafebabe 00000002 01000007')), 'macho', { fat: true, architectures: 2 }],
    ['Java class (major 52)', classFile(), 'java_class', { classVersion: 52 }],
    ['DEX', withPad(Buffer.from('dex\n035\0', 'latin1')), 'dex'],
    ['7z', withPad(hex('377abcaf271c0004')), '7z'],
    ['RAR5', withPad(hex('526172211a070100')), 'rar'],
    ['gzip', zlib.gzipSync(Buffer.from('hello')), 'gzip'],
    ['OLE', withPad(hex('d0cf11e0a1b11ae1')), 'office_ole'],
    ['PDF', Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'), 'pdf'],
    ['PDF with junk before the header', Buffer.concat([Buffer.alloc(100, 0x20), Buffer.from('%PDF-1.4\n')]), 'pdf', { headerOffset: 100 }],
    ['PNG', withPad(hex('89504e470d0a1a0a')), 'image'],
    ['JPEG', withPad(hex('ffd8ffe0')), 'image'],
    ['GIF', withPad(Buffer.from('GIF89a')), 'image'],
    ['WEBP', withPad(Buffer.from('RIFF\x10\0\0\0WEBPVP8 ', 'latin1')), 'image'],
    ['random bytes', Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % 256)), 'unknown'],
  ];
  for (const [label, content, type, traits] of cases) {
    it(label, async () => {
      const r = await identify(content, 'whatever.bin');
      expect(r.fileType).toBe(type);
      if (traits) expect(r.traits).toMatchObject(traits);
    });
  }

  it('BMP and ICO', async () => {
    const bmp = Buffer.alloc(64); bmp.write('BM', 0, 'latin1'); bmp.writeUInt32LE(64, 2); bmp.writeUInt32LE(40, 14);
    expect((await identify(bmp)).contentType).toBe('image/bmp');
    const ico = Buffer.alloc(40); ico.writeUInt16LE(1, 2); ico.writeUInt16LE(1, 4);
    expect((await identify(ico)).contentType).toBe('image/vnd.microsoft.icon');
  });

  it('tar: ustar at offset 257', async () => {
    expect((await identify(await makeTar([{ name: 'a.txt', data: Buffer.from('x') }]))).fileType).toBe('tar');
  });

  it('the name is only a hint: an executable called .txt is still PE', async () => {
    expect((await identify(pe(), 'invoice.txt')).fileType).toBe('pe');
    expect((await identify(Buffer.from('just words here\n'), 'setup.exe')).fileType).toBe('text');
  });
});

describe('identify: zip family by entry names', () => {
  it('plain zip', async () => {
    const r = await identify(await makeZip([{ name: 'a.txt', data: Buffer.from('a') }]));
    expect(r).toMatchObject({ fileType: 'zip', contentType: 'application/zip', coverage: 'partial' });
  });
  it('jar (MANIFEST / .class entries)', async () => {
    expect((await identify(await makeJar({ group: 'g', id: 'a', version: '1' }))).fileType).toBe('jar');
    expect((await identify(await makeZip([{ name: 'A.class', data: classFile() }]))).fileType).toBe('jar');
  });
  it('apk (AndroidManifest.xml / classes.dex)', async () => {
    const apk = await makeZip([{ name: 'AndroidManifest.xml', data: Buffer.from([3, 0, 8, 0]) }, { name: 'classes.dex', data: Buffer.from('dex\n035\0') }]);
    expect((await identify(apk)).fileType).toBe('apk');
  });
  it('OOXML word/xl/ppt with the right media type', async () => {
    const ct = { name: '[Content_Types].xml', data: Buffer.from('<Types/>') };
    const docx = await identify(await makeZip([ct, { name: 'word/document.xml', data: Buffer.from('<w/>') }]));
    expect(docx).toMatchObject({ fileType: 'office_ooxml', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    const xlsx = await identify(await makeZip([ct, { name: 'xl/workbook.xml', data: Buffer.from('<x/>') }]));
    expect(xlsx.contentType).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const pptx = await identify(await makeZip([ct, { name: 'ppt/presentation.xml', data: Buffer.from('<p/>') }]));
    expect(pptx.contentType).toBe('application/vnd.openxmlformats-officedocument.presentationml.presentation');
  });
});

describe('identify: text formats', () => {
  const cases: Array<[string, string, string, string]> = [
    ['PowerShell', 'x.ps1', '$url = "http://example.org/a"\nInvoke-WebRequest -Uri $url\nWrite-Host "done"\n', 'powershell'],
    ['PowerShell without extension', '', 'param([string]$Path)\n$env:TEMP\nGet-ChildItem $Path | Write-Output\n', 'powershell'],
    ['JavaScript', 'a.js', 'const fs = require("fs");\nfunction main() { console.log(1); }\n', 'javascript'],
    ['JavaScript without extension', '', 'const a = 1;\nconst f = (x) => { return x; };\nmodule.exports = f;\n', 'javascript'],
    ['JavaScript ES module', 'Get.js', 'import { command } from "../builder";\nexport class GetCommand extends command("Get") {\n}\n', 'javascript'],
    ['VBScript', 'a.vbs', 'Dim shell\nSet shell = CreateObject("WScript.Shell")\nshell.Run "calc"\n', 'vbscript'],
    ['batch', 'a.bat', '@echo off\nset X=1\ngoto :end\n:end\n', 'batch'],
    ['shell by shebang', 'noext', '#!/usr/bin/env bash\necho hi\n', 'shell'],
    ['python by shebang', 'run', '#!/usr/bin/python3\nprint(1)\n', 'python'],
    ['node by shebang', 'cli', '#!/usr/bin/env node\nconsole.log(1)\n', 'javascript'],
    ['python without shebang', 'x.py', 'import os\n\ndef main():\n    print(os.getcwd())\n', 'python'],
    // A package's metadata module: only dunder assignments, which only Python writes.
    ['python metadata module', '_meta.py', '__author__ = "A. Author"\n__copyright__ = "2024"\n__credits__ = [\n    "B. Helper",\n]\n', 'python'],
    ['dunder assignments without the name stay text', 'notes', '__author__ = "A. Author"\n', 'text'],
    ['PHP by its opening tag', 'x.php', '<?php\nfunction main($argv) {\n    return count($argv);\n}\n', 'php'],
    ['PHP by shebang', 'tool', '#!/usr/bin/env php\n<?php\necho "hi";\n', 'php'],
    ['PHP class without the extension', 'Mailer', '<?php\nnamespace App;\n\nclass Mailer {\n    public function send($to) {\n        $this->log("sending");\n    }\n}\n', 'php'],
    ['PHP template opening with HTML', 'index.php', '<html><body>\n<?php echo htmlspecialchars($_GET["q"]); ?>\n</body></html>\n', 'php'],
    ['HTML', 'page', '<!DOCTYPE html>\n<html><body><p>hi</p></body></html>\n', 'html'],
    ['plain text', 'notes.txt', 'The quarterly numbers look good.\nSee you on Monday.\n', 'text'],
    ['UTF-8 text', 'u.txt', 'Grüße aus München — ça va? 日本語\n', 'text'],
  ];
  for (const [label, name, body, type] of cases) {
    it(label, async () => {
      const r = await identify(Buffer.from(body), name);
      expect(r.fileType).toBe(type);
      expect(r.contentType).toMatch(/^[a-z]+\/[\w.+-]+$/);
    });
  }
});

describe('identify: PHP that looks like another language (issue 30)', () => {
  // Horde's PDF font metrics: a class whose methods return arrays of chr(N) => width pairs. The
  // `function (` and `=>` patterns made these JavaScript.
  const widths = Array.from({ length: 256 }, (_, i) => `chr(${i}) => ${500 + (i % 7) * 10}`).join(', ');
  const fontTable = `<?php\n/**\n * Font metrics.\n */\nclass Horde_Pdf_Font_Courier\n{\n    public function getWidths()\n    {\n        return array(${widths});\n    }\n}\n`;
  it('an image carrying a PHP block is PHP (the upload web shell), an ordinary image stays an image', async () => {
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0x80, 0, 0]), Buffer.from('<?PHP system($_GET["c"]); ?>')]);
    const info = await identify(gif, 'avatar.gif');
    expect(info.fileType).toBe('php');
    expect(info.traits.disguisedAs).toBe('image/gif');
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF <? not php ?>'), Buffer.alloc(64, 7)]);
    expect((await identify(jpeg, 'photo.jpg')).fileType).toBe('image');
  });

  it('a font-metric table that opens with <?php is PHP, with or without the .php name', async () => {
    expect((await identify(Buffer.from(fontTable), 'courier.php')).fileType).toBe('php');
    expect((await identify(Buffer.from(fontTable), 'courier')).fileType).toBe('php');
    expect((await identify(Buffer.from(`\uFEFF\n${fontTable}`), 'courier.php')).contentType).toBe('text/x-php');
  });
  it('JavaScript that mentions PHP stays JavaScript', async () => {
    expect((await identify(Buffer.from('// renders <?php tags in the editor\nconst tags = ["<?php"];\nfunction f() { return tags; }\n'), 'tags.js')).fileType).toBe('javascript');
  });
});

describe('coverage per spec', () => {
  it('pe/elf full; java_class/jar/apk/dex/macho minimal; everything else partial, with a note when not full', () => {
    const expected: Record<string, string> = { pe: 'full', elf: 'full', java_class: 'minimal', jar: 'minimal', apk: 'minimal', dex: 'minimal', macho: 'minimal' };
    for (const t of FILE_TYPES) expect(TYPE_INFO[t].coverage).toBe(expected[t] ?? 'partial');
  });
  it('minimal and partial results carry a coverageNote; full does not', async () => {
    expect((await identify(pe())).coverageNote).toBeUndefined();
    expect((await identify(classFile())).coverageNote).toMatch(/pattern rules/);
    expect((await identify(Buffer.from('hello there\n'))).coverageNote).toMatch(/general script-text model, not one built for this format/);
  });
});

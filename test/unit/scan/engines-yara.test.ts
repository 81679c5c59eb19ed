import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUNDLED_RULES_DIR, createYaraEngine } from '../../../src/scan/engines/yara';
import { EICAR } from '../../fixtures/scripts/make-corpus';
import { ctx, subjectOf } from './support/subject';

const engine = createYaraEngine({ ruleDirs: [BUNDLED_RULES_DIR] });
const ids = async (content: Buffer | string): Promise<string[]> =>
  (await engine.scan(await subjectOf(Buffer.from(content)), ctx())).findings.map((f) => f.id);

function pe(sections: string[], extra = ''): Buffer {
  const b = Buffer.alloc(0x400);
  b.write('MZ', 0, 'latin1');
  b.writeUInt32LE(0x80, 0x3c);
  b.write('PE\0\0', 0x80, 'latin1');
  sections.forEach((s, i) => b.write(s, 0x178 + i * 40, 'latin1'));
  b.write(extra, 0x300, 'latin1');
  return b;
}

describe('yara engine: bundled rules fire on their techniques', () => {
  it('EICAR and base64 EICAR', async () => {
    expect(await ids(EICAR)).toContain('yara.Test_EICAR');
    expect(await ids(Buffer.from(EICAR).toString('base64'))).toContain('yara.Test_EICAR_Base64');
  });
  it('UPX-packed PE and ELF', async () => {
    expect(await ids(pe(['UPX0', 'UPX1']))).toContain('yara.Packer_UPX');
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(100), Buffer.from('UPX!\0$Info: This file is packed with the UPX executable packer http://upx.sf.net $')]);
    expect(await ids(elf)).toContain('yara.Packer_UPX');
  });
  it('shellcode prologue and an allocate-copy-run loader', async () => {
    const sc = Buffer.concat([Buffer.alloc(16), Buffer.from('fce8820000006089e531c0648b5030', 'hex')]);
    expect(await ids(sc)).toContain('yara.Shellcode_Metasploit_Block_API');
    const ps = '$m=[System.Runtime.InteropServices.Marshal]::Copy($sc,0,$p,$sc.Length)\n$f=[Runtime.InteropServices.Marshal]::GetDelegateForFunctionPointer($va,[T])\n$p=VirtualAlloc(0,4096,0x3000,0x40)';
    expect(await ids(ps)).toContain('yara.Loader_VirtualAlloc_CreateThread');
    // A keyword list naming the same APIs (a syntax highlighter's Windows API file) is not a loader.
    const names = ['CreateRemoteThread', 'CreateThread', 'RtlMoveMemory', 'VirtualAlloc', 'VirtualAllocEx', 'WriteProcessMemory'];
    const list = `<?php\n$k = array(\n  ${names.map((n) => `'${n}'`).join(', ')}, 'ZwClose'\n);\n`;
    expect(await ids(list)).not.toContain('yara.Loader_VirtualAlloc_CreateThread');
    // Listed, then called: the call makes it a loader again.
    expect(await ids(`${list}$p = VirtualAlloc(0, 4096, 0x3000, 0x40);\n`)).toContain('yara.Loader_VirtualAlloc_CreateThread');
  });
  it('PHP web shell', async () => {
    expect(await ids('<?php @eval(base64_decode($_POST["z0"])); ?>')).toContain('yara.Webshell_PHP_Eval_Request');
  });
  it('ransom note and shadow-copy deletion', async () => {
    const note = 'All your files have been encrypted!\nTo decrypt them pay 0.5 bitcoin (BTC) to the wallet below.\nContact us: http://abcdefghijklmnop.onion\n';
    expect(await ids(note)).toContain('yara.Ransomware_Note');
    expect(await ids('cmd /c vssadmin.exe delete shadows /all /quiet')).toContain('yara.Ransomware_Shadow_Copy_Deletion');
  });
  it('credential stealer and miner', async () => {
    const stealer = 'C:\\Users\\x\\AppData\\Local\\Google\\Chrome\\User Data\\Default\\Login Data|\\Microsoft\\Edge\\User Data|encrypted_key|wallet.dat';
    expect(await ids(stealer)).toContain('yara.Stealer_Browser_Credentials');
    expect(await ids('{"url": "stratum+tcp://pool.supportxmr.com:3333", "algo": "rx/0", "donate-level": 1, "xmrig": true}')).toContain('yara.Miner_XMRig_Stratum');
  });
  it('findings carry meta severity, category, confidence and an excerpt', async () => {
    const [f] = (await engine.scan(await subjectOf(Buffer.from(EICAR)), ctx())).findings;
    expect(f).toMatchObject({ severity: 'critical', category: 'test', confidence: 1, name: 'EICAR-Test-File' });
    expect(f.excerpt).toContain('EICAR-STANDARD');
  });
});

describe('yara engine: quiet on benign content', () => {
  it('no matches on prose, code and system binaries', async () => {
    expect(await ids('The quick brown fox. We use bitcoin for donations and decrypt nothing.')).toEqual([]);
    expect(await ids(readFileSync(__filename))).not.toContain('yara.Test_EICAR');
    for (const f of readdirSync('/usr/bin').slice(0, 60)) {
      const p = path.join('/usr/bin', f);
      let content: Buffer;
      try { content = readFileSync(p); } catch { continue; }
      expect({ file: p, ids: await ids(content) }).toEqual({ file: p, ids: [] });
    }
  });
});

describe('yara engine: operator rules directory', () => {
  it('loads rules from an extra directory alongside the bundled set', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'yara-op-'));
    writeFileSync(path.join(dir, 'ops.yar'), 'rule Operator_Marker { meta: severity = "high" strings: $a = "OPERATOR-MARKER-123" condition: $a }\n');
    const withOps = createYaraEngine({ ruleDirs: [BUNDLED_RULES_DIR, dir] });
    const out = await withOps.scan(await subjectOf(Buffer.from(`xx OPERATOR-MARKER-123 ${EICAR}`)), ctx());
    expect(out.findings.map((f) => f.id)).toEqual(expect.arrayContaining(['yara.Operator_Marker']));
    expect(out.findings.find((f) => f.id === 'yara.Operator_Marker')?.severity).toBe('high');
  });
  it('a broken operator rule fails loudly with the directory named', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'yara-bad-'));
    writeFileSync(path.join(dir, 'bad.yar'), 'rule Broken { condition: $nope }\n');
    await expect(createYaraEngine({ ruleDirs: [dir] }).scan(await subjectOf(Buffer.from('x')), ctx())).rejects.toThrow(dir);
  });
});

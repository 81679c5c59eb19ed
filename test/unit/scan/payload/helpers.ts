/** Test helpers: run a payload engine on text, and synthetic secrets with valid checksums. */
import { createHash } from 'node:crypto';
import { FileAnalysis } from '../../../../src/scan/file-analysis';
import type { Engine, EngineOutput, ScanSubject } from '../../../../src/scan/types';

export function subject(text: string, name = ''): ScanSubject {
  const content = Buffer.from(text, 'utf8');
  const h = (a: string): string => createHash(a).update(content).digest('hex');
  return { content, name, size: content.length, fileType: 'text', contentType: 'text/plain', sha256: h('sha256'), md5: h('md5'), sha1: h('sha1'), depth: 0, scanType: 'payload', file: new FileAnalysis(content) };
}

export async function scan(engine: Engine, text: string, name = ''): Promise<EngineOutput> {
  return engine.scan(subject(text, name), { signal: new AbortController().signal, budgetMs: 10_000 });
}

function luhnDigit(body: string): string {
  for (let d = 0; d < 10; d++) {
    const s = body + d;
    let sum = 0;
    for (let i = 0; i < s.length; i++) {
      let v = Number(s[s.length - 1 - i]);
      if (i % 2 === 1) {
        v *= 2;
        if (v > 9) v -= 9;
      }
      sum += v;
    }
    if (sum % 10 === 0) return String(d);
  }
  throw new Error('unreachable');
}

function iban(cc: string, bban: string): string {
  let rem = 0;
  for (const ch of `${bban}${cc}00`) {
    const v = /[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch;
    for (const d of v) rem = (rem * 10 + Number(d)) % 97;
  }
  return `${cc}${String(98 - rem).padStart(2, '0')}${bban}`;
}

function bsn(prefix: string): string {
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * Number(prefix[i]);
  return prefix + String(sum % 11);
}

function pseudoRandom(n: number, seed: number): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += chars[(x >>> 16) % 64];
  }
  return out;
}

const PEM_BODY = Array.from({ length: 6 }, (_, i) => pseudoRandom(64, i + 7)).join('\n');

/** One synthetic value per detector type: [type, raw value, text that carries it]. */
export function secretCorpus(): Array<[string, string, string]> {
  const card = `411111111111${'4242'.slice(0, 3)}`;
  const visa = card + luhnDigit(card);
  const dniNum = '48291736';
  const dni = dniNum + 'TRWAGMYFPDXBNJZSQVHLCKE'[Number(dniNum) % 23];
  const azureKey = `${'Zm9vYmFyYmF6cXV4'.repeat(5)}AbCdEf==`;
  return [
    ['aws_access_key_id', 'AKIAZ7QWERTY5UIOP2AS', 'aws_access_key_id = AKIAZ7QWERTY5UIOP2AS'],
    ['aws_secret_access_key', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEK2', 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEK2'],
    ['gcp_service_account_key', '3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d', '{"type": "service_account", "private_key_id": "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"}'],
    ['azure_storage_key', azureKey, `DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=${azureKey};EndpointSuffix=core.windows.net`],
    ['github_token', 'ghp_R7b2Xk9Qm4Lp1Zt8Vw3Ny6Hc5Jd0Fg2Sa4Eu', 'GITHUB_TOKEN=ghp_R7b2Xk9Qm4Lp1Zt8Vw3Ny6Hc5Jd0Fg2Sa4Eu'],
    ['gitlab_token', 'glpat-Xy7Zq2Wv9Ut4Sr1Pq8On', 'token glpat-Xy7Zq2Wv9Ut4Sr1Pq8On here'],
    ['slack_token', 'xoxb-123456789012-987654321098-AbCdEfGhIjKlMnOpQrStUvWx', 'SLACK=xoxb-123456789012-987654321098-AbCdEfGhIjKlMnOpQrStUvWx'],
    ['stripe_secret_key', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'stripe key sk_live_4eC39HqLyjWDarjtT1zdp7dc'],
    ['openai_api_key', 'sk-proj-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2Qr5Tu8', 'OPENAI_API_KEY=sk-proj-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2Qr5Tu8'],
    ['anthropic_api_key', `sk-ant-api03-${'Qw3Er5Ty7Ui9Op1As'.repeat(5)}AbCdEfGhAA`, `key: sk-ant-api03-${'Qw3Er5Ty7Ui9Op1As'.repeat(5)}AbCdEfGhAA`],
    ['google_api_key', 'AIzaSyD3x7Qk9Lm2Np4Rt6Vw8Yz0Bc1Df3Gh5Jk', 'const k = "AIzaSyD3x7Qk9Lm2Np4Rt6Vw8Yz0Bc1Df3Gh5Jk";'],
    ['twilio_api_key', 'SK0123456789abcdef0123456789abcdef', 'TWILIO_KEY=SK0123456789abcdef0123456789abcdef'],
    ['slack_webhook', 'https://hooks.slack.com/services/T0ABCDEF12/B0ABCDEF34/aB3dE6gH9jK2mN5pQ8sT1vW4', 'hook: https://hooks.slack.com/services/T0ABCDEF12/B0ABCDEF34/aB3dE6gH9jK2mN5pQ8sT1vW4'],
    ['azure_sas_token', 'k7Xq2Lm9Pz4Rt8Vw1Ny5Hc3Jd6Fg0Sa2Eu4Ib7Oc%3D', 'https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig=k7Xq2Lm9Pz4Rt8Vw1Ny5Hc3Jd6Fg0Sa2Eu4Ib7Oc%3D'],
    ['twilio_auth_token', '9f8e7d6c5b4a39281706f5e4d3c2b1a0', 'TWILIO_AUTH_TOKEN=9f8e7d6c5b4a39281706f5e4d3c2b1a0'],
    ['sendgrid_api_key', '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', 'SENDGRID=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'],
    ['private_key', PEM_BODY.split('\n')[2], `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----`],
    ['jwt', 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ.Sfl2KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c', 'Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ.Sfl2KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'],
    ['database_connection_string', 'Tr0ub4dor3xQz', 'DATABASE_URL=postgres://app:Tr0ub4dor3xQz@db.internal:5432/prod'],
    ['password_in_url', 'Hx8pQ2vL9wZk', 'webhook https://deploy:Hx8pQ2vL9wZk@ci.example.com/hook'],
    ['generic_secret', 'Zq8!mP3#vX9wL2', 'db_password = "Zq8!mP3#vX9wL2"'],
    ['email_address', 'jane.roe77@example.org', 'write to jane.roe77@example.org today'],
    ['phone_number', '+442079460958', 'call +442079460958 now'],
    ['payment_card', visa, `card ${visa} exp 01/29`],
    ['iban', iban('DE', '370400440532013000'), `IBAN ${iban('DE', '370400440532013000')}`],
    ['us_ssn', '219-44-7310', 'SSN 219-44-7310'],
    ['uk_nino', 'AB123456C', 'NI AB123456C'],
    ['es_dni', dni, `DNI ${dni}`],
    ['nl_bsn', bsn('11122233'), `BSN ${bsn('11122233')}`],
  ];
}

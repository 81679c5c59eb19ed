/**
 * Key material with hostile input: the account key format `sk_<16 hex>.<43 base64url>`, the
 * timing-safe hash comparison, entity JWTs (HS256 only, signature, time claims, required claims)
 * and AES-256-GCM sealing of stored secrets.
 */
import { createHmac, randomBytes } from 'node:crypto';
import {
  hashesEqual, looksLikeJwt, newAccountKey, parseAccountKey, resourcePathOf, sha256Hex, signEntityKey, verifyEntityKey,
} from '../../../src/accounts/keys';
import { decryptSecret, encryptSecret } from '../../../src/crypto';

const SECRET = new TextEncoder().encode('0123456789abcdef0123456789abcdef-entity-secret');
const OTHER_SECRET = new TextEncoder().encode('fedcba9876543210fedcba9876543210-entity-secret');
const ACC = '5f0c6d2e-8b1a-4c3d-9e7f-0a1b2c3d4e5f';
const CLAIMS = { resourcePath: resourcePathOf(ACC, 'sensor-1'), apiKeyId: '0123456789abcdef01234567', accountId: ACC };

const b64u = (v: string | Buffer) => Buffer.from(v).toString('base64url');
/** Builds a JWT by hand so the header and the signing algorithm can be anything. */
function rawJwt(header: Record<string, unknown>, payload: Record<string, unknown>, opts: { key?: Uint8Array; hmac?: 'sha256' | 'sha384' | 'sha512'; sig?: string } = {}): string {
  const input = `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(payload))}`;
  const sig = opts.sig ?? createHmac(opts.hmac ?? 'sha256', opts.key ?? SECRET).update(input).digest('base64url');
  return `${input}.${sig}`;
}
const now = () => Math.floor(Date.now() / 1000);
const goodPayload = () => ({ sub: CLAIMS.resourcePath, jti: CLAIMS.apiKeyId, acc: ACC, iat: now() });

describe('account key format', () => {
  const id = '0123456789abcdef';
  const secret = 'A'.repeat(42) + 'g';

  test('a freshly issued key parses back into its id, and its secret hashes to the stored hash', () => {
    for (let i = 0; i < 20; i++) {
      const k = newAccountKey();
      const p = parseAccountKey(k.apiKey);
      expect(p).toEqual({ apiKeyId: k.apiKeyId, secret: k.apiKey.split('.')[1] });
      expect(sha256Hex(p!.secret)).toBe(k.hash);
    }
  });

  test('the well-formed reference key parses', () => {
    expect(parseAccountKey(`sk_${id}.${secret}`)).toEqual({ apiKeyId: id, secret });
  });

  test.each([
    ['empty', ''],
    ['no prefix', `${id}.${secret}`],
    ['other prefix', `pk_${id}.${secret}`],
    ['upper-case prefix', `SK_${id}.${secret}`],
    ['missing dot', `sk_${id}${secret}`],
    ['empty id', `sk_.${secret}`],
    ['empty secret', `sk_${id}.`],
    ['only the dot', 'sk_.'],
    ['extra dot in the secret', `sk_${id}.${secret.slice(0, 20)}.${secret.slice(21)}`],
    ['two dots', `sk_${id}..${secret}`],
    ['extra trailing segment', `sk_${id}.${secret}.x`],
    ['upper-case hex id', `sk_${id.toUpperCase()}.${secret}`],
    ['short id', `sk_${id.slice(1)}.${secret}`],
    ['long id', `sk_${id}0.${secret}`],
    ['short secret', `sk_${id}.${secret.slice(1)}`],
    ['long secret', `sk_${id}.${secret}A`],
    ['base64 (not url) characters', `sk_${id}.${'+'.repeat(43)}`],
    ['padding', `sk_${id}.${secret.slice(0, 42)}=`],
    ['trailing newline', `sk_${id}.${secret}\n`],
    ['leading space', ` sk_${id}.${secret}`],
    ['trailing space', `sk_${id}.${secret} `],
    ['NUL inside', `sk_${id}.${secret.slice(0, 42)}\u0000`],
    ['unicode look-alike digit in id', `sk_${id.slice(0, 15)}\u0661.${secret}`],
    ['fullwidth letter in secret', `sk_${id}.${secret.slice(0, 42)}\uff21`],
    ['emoji', `sk_${id}.${secret.slice(0, 41)}\u{1F600}`],
    ['a JWT', rawJwt({ alg: 'HS256' }, goodPayload())],
  ])('%s is refused', (_what, token) => {
    expect(parseAccountKey(token)).toBeUndefined();
  });

  // Catastrophic backtracking would hang here until the test's timeout.
  test('a very long key is refused', () => {
    expect(parseAccountKey(`sk_${id}.${'A'.repeat(1_000_000)}`)).toBeUndefined();
    expect(parseAccountKey(`sk_${'a'.repeat(1_000_000)}`)).toBeUndefined();
    expect(parseAccountKey('sk_'.repeat(300_000))).toBeUndefined();
  });
});

describe('hashesEqual', () => {
  const h = sha256Hex('secret');

  test('equal digests compare equal, case-insensitively as hex', () => {
    expect(hashesEqual(h, h)).toBe(true);
    expect(hashesEqual(h, h.toUpperCase())).toBe(true);
  });

  test('a digest differing in its last nibble, its first nibble or entirely is not equal', () => {
    const flipLast = h.slice(0, -1) + (h.endsWith('0') ? '1' : '0');
    const flipFirst = (h.startsWith('0') ? '1' : '0') + h.slice(1);
    expect(hashesEqual(h, flipLast)).toBe(false);
    expect(hashesEqual(h, flipFirst)).toBe(false);
    expect(hashesEqual(h, sha256Hex('other'))).toBe(false);
  });

  test('different lengths answer false instead of throwing (timingSafeEqual would throw)', () => {
    expect(() => hashesEqual(h, h.slice(0, 62))).not.toThrow();
    expect(hashesEqual(h, h.slice(0, 62))).toBe(false);
    expect(hashesEqual(h.slice(0, 62), h)).toBe(false);
    expect(hashesEqual(h, h + 'ab')).toBe(false);
    expect(hashesEqual(h, sha256Hex('x').slice(0, 40))).toBe(false);
  });

  test('empty or non-hex input never compares equal, even to itself', () => {
    expect(hashesEqual('', '')).toBe(false);
    expect(hashesEqual('zz', 'zz')).toBe(false);
    expect(hashesEqual('', h)).toBe(false);
    expect(hashesEqual(h, '')).toBe(false);
    expect(hashesEqual('not hex at all', 'not hex at all')).toBe(false);
  });
});

describe('entity JWT verification', () => {
  test('a key signed by the service verifies to its claims', async () => {
    const token = await signEntityKey(SECRET, CLAIMS);
    expect(looksLikeJwt(token)).toBe(true);
    expect(await verifyEntityKey(SECRET, token)).toEqual(CLAIMS);
  });

  test('a hand-built HS256 token with the same claims verifies (the helper signs like jose)', async () => {
    expect(await verifyEntityKey(SECRET, rawJwt({ alg: 'HS256', typ: 'JWT' }, goodPayload()))).toEqual(CLAIMS);
  });

  test.each([
    ['alg none, no signature', () => rawJwt({ alg: 'none', typ: 'JWT' }, goodPayload(), { sig: '' })],
    ['alg none with the HS256 signature kept', () => rawJwt({ alg: 'none' }, goodPayload())],
    ['alg NONE (case games)', () => rawJwt({ alg: 'NONE' }, goodPayload(), { sig: '' })],
    ['HS512 with the right secret', () => rawJwt({ alg: 'HS512' }, goodPayload(), { hmac: 'sha512' })],
    ['HS384 with the right secret', () => rawJwt({ alg: 'HS384' }, goodPayload(), { hmac: 'sha384' })],
    ['RS256 header over an HMAC signature (algorithm confusion)', () => rawJwt({ alg: 'RS256' }, goodPayload())],
    ['no alg in the header', () => rawJwt({ typ: 'JWT' }, goodPayload())],
    ['wrong secret', () => rawJwt({ alg: 'HS256' }, goodPayload(), { key: OTHER_SECRET })],
    ['empty secret', () => rawJwt({ alg: 'HS256' }, goodPayload(), { key: new Uint8Array() })],
    ['expired', () => rawJwt({ alg: 'HS256' }, { ...goodPayload(), exp: now() - 60 })],
    ['not valid yet (nbf in the future)', () => rawJwt({ alg: 'HS256' }, { ...goodPayload(), nbf: now() + 3600 })],
    ['exp that is not a number', () => rawJwt({ alg: 'HS256' }, { ...goodPayload(), exp: 'never' })],
    ['unknown critical header', () => rawJwt({ alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 }, goodPayload())],
    ['unencoded payload (b64:false)', () => rawJwt({ alg: 'HS256', b64: false, crit: ['b64'] }, goodPayload())],
    ['missing sub', () => rawJwt({ alg: 'HS256' }, { jti: CLAIMS.apiKeyId, acc: ACC })],
    ['missing jti', () => rawJwt({ alg: 'HS256' }, { sub: CLAIMS.resourcePath, acc: ACC })],
    ['missing acc', () => rawJwt({ alg: 'HS256' }, { sub: CLAIMS.resourcePath, jti: CLAIMS.apiKeyId })],
    ['acc as a number', () => rawJwt({ alg: 'HS256' }, { ...goodPayload(), acc: 42 })],
    ['acc as an object', () => rawJwt({ alg: 'HS256' }, { ...goodPayload(), acc: { $ne: null } })],
    ['jti as an array', () => rawJwt({ alg: 'HS256' }, { ...goodPayload(), jti: [CLAIMS.apiKeyId] })],
    ['sub null', () => rawJwt({ alg: 'HS256' }, { ...goodPayload(), sub: null })],
  ])('%s is refused', async (_what, make) => {
    expect(await verifyEntityKey(SECRET, make())).toBeUndefined();
  });

  test('a tampered payload (another entity, another account) with the original signature is refused', async () => {
    const token = await signEntityKey(SECRET, CLAIMS);
    const [h, , s] = token.split('.');
    for (const payload of [
      { ...goodPayload(), sub: resourcePathOf(ACC, 'sensor-2') },
      { ...goodPayload(), acc: 'another-account' },
      { ...goodPayload(), jti: 'ffffffffffffffffffffffff' },
    ]) {
      expect(await verifyEntityKey(SECRET, `${h}.${b64u(JSON.stringify(payload))}.${s}`)).toBeUndefined();
    }
  });

  test('a signature with a flipped bit, a truncated signature and a swapped signature are refused', async () => {
    const token = await signEntityKey(SECRET, CLAIMS);
    const [h, p, s] = token.split('.');
    const sig = Buffer.from(s, 'base64url');
    sig[sig.length - 1] ^= 1;
    const other = (await signEntityKey(SECRET, { ...CLAIMS, apiKeyId: 'ffffffffffffffffffffffff' })).split('.')[2];
    for (const t of [`${h}.${p}.${sig.toString('base64url')}`, `${h}.${p}.${s.slice(0, -4)}`, `${h}.${p}.${other}`, `${h}.${p}.`, `${h}.${p}`]) {
      expect(await verifyEntityKey(SECRET, t)).toBeUndefined();
    }
  });

  test('garbage, unicode and a 1 MB token are refused without throwing', async () => {
    for (const t of ['', '.', '..', 'ey.ey.ey', 'eyJ\u00e9.eyJ.x', '\u{1F600}.\u{1F600}.\u{1F600}', `eyJ${'A'.repeat(1_000_000)}.eyJ.sig`]) {
      await expect(verifyEntityKey(SECRET, t)).resolves.toBeUndefined();
    }
  });

  test('looksLikeJwt routes only three-part ey... tokens to JWT verification', () => {
    expect(looksLikeJwt('eyA.eyB.c')).toBe(true);
    expect(looksLikeJwt(newAccountKey().apiKey)).toBe(false);
    expect(looksLikeJwt('eyA.eyB')).toBe(false);
    expect(looksLikeJwt('eyA.eyB.c.d')).toBe(false);
    expect(looksLikeJwt('xyA.eyB.c')).toBe(false);
  });
});

describe('AES-256-GCM sealing (src/crypto.ts)', () => {
  const key = randomBytes(32);

  test.each([
    ['ascii', 'bearer-token-123'],
    ['empty', ''],
    ['unicode', 'cl\u00e9 \u{1F511} \u5bc6\u94a5'],
    ['NUL and newlines', 'a\u0000b\r\nc'],
    ['1 MB', 'x'.repeat(1 << 20)],
  ])('%s round-trips, and two seals of it differ (fresh IV)', (_w, plain) => {
    const a = encryptSecret(key, plain);
    const b = encryptSecret(key, plain);
    expect(a).not.toBe(b);
    expect(decryptSecret(key, a)).toBe(plain);
    // iv (12) | tag (16) | ciphertext (as long as the UTF-8 plaintext)
    expect(Buffer.from(a, 'base64').length).toBe(28 + Buffer.byteLength(plain));
  });

  test('a wrong key, a flipped bit in IV, tag or ciphertext, and truncation all throw', () => {
    const sealed = Buffer.from(encryptSecret(key, 'webhook-secret'), 'base64');
    expect(() => decryptSecret(randomBytes(32), sealed.toString('base64'))).toThrow();
    for (const at of [0, 11, 12, 27, 28, sealed.length - 1]) {
      const bad = Buffer.from(sealed);
      bad[at] ^= 0x01;
      expect(() => decryptSecret(key, bad.toString('base64'))).toThrow();
    }
    for (const len of [0, 12, 20, 27, 28, sealed.length - 1]) {
      expect(() => decryptSecret(key, sealed.subarray(0, len).toString('base64'))).toThrow();
    }
  });
});

/**
 * Key material. Account API keys are `sk_<keyId>.<secret>`: the keyId finds the record, the
 * secret is compared as a SHA-256 hash with a timing-safe comparison (the secret has 256 bits of
 * entropy, so a fast hash is sufficient). Entity API keys are HS256 JWTs (sub = resourcePath,
 * jti = apiKeyId); the service keeps only the jti and the token's SHA-256.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

const ACCOUNT_KEY_RE = /^sk_([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;

export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

export function newAccountKey(): { apiKey: string; apiKeyId: string; hash: string } {
  const apiKeyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { apiKey: `sk_${apiKeyId}.${secret}`, apiKeyId, hash: sha256Hex(secret) };
}

export function parseAccountKey(token: string): { apiKeyId: string; secret: string } | undefined {
  const m = ACCOUNT_KEY_RE.exec(token);
  return m ? { apiKeyId: m[1], secret: m[2] } : undefined;
}

/** Constant-time comparison of two hex digests (false when lengths differ). */
export function hashesEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

export const newEntityKeyId = (): string => randomBytes(12).toString('hex');

export async function signEntityKey(secret: Uint8Array, claims: { resourcePath: string; apiKeyId: string; accountId: string }): Promise<string> {
  return new SignJWT({ acc: claims.accountId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.resourcePath)
    .setJti(claims.apiKeyId)
    .setIssuedAt()
    .sign(secret);
}

export interface EntityKeyClaims { resourcePath: string; apiKeyId: string; accountId: string }

/** Verifies the signature and shape; the caller still checks the jti record (revocation). */
export async function verifyEntityKey(secret: Uint8Array, token: string): Promise<EntityKeyClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'] });
    if (typeof payload.sub !== 'string' || typeof payload.jti !== 'string' || typeof payload.acc !== 'string') return undefined;
    return { resourcePath: payload.sub, apiKeyId: payload.jti, accountId: payload.acc };
  } catch {
    return undefined;
  }
}

export const looksLikeJwt = (token: string): boolean => token.split('.').length === 3 && token.startsWith('ey');

export const resourcePathOf = (accountId: string, entityName: string): string => `accounts/${accountId}/entities/${entityName}`;

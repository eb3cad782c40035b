// A signing key for the provider: `node e2e/idp/new-key.mjs RS256|ES256` prints
// one JSON line {jwk, der, pem}: the private JWK for the provider's config, the
// same key as DER in the form jsonwebtoken signs with (PKCS#1 for RSA, PKCS#8
// for EC), and the public key as PEM. Node makes it (OpenSSL): an RSA key made
// by an unoptimized Rust test build takes seconds.
import { generateKeyPairSync, randomUUID } from 'node:crypto';

const alg = process.argv[2] ?? 'RS256';
const { privateKey, publicKey } = alg === 'ES256'
  ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
  : generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg, use: 'sig' };
const der = privateKey.export({ type: alg === 'ES256' ? 'pkcs8' : 'pkcs1', format: 'der' }).toString('base64');
const pem = publicKey.export({ type: 'spki', format: 'pem' });
process.stdout.write(`${JSON.stringify({ jwk, der, pem })}\n`);

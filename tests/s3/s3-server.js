// tests/s3/s3-server.js - a local S3 that verifies SigV4 (header auth) and the payload hash,
// path-style only.
// usage: node s3-server.js DATA_DIR PORT|0 [PORTFILE]
// env: S3_TEST_KEY, S3_TEST_SECRET (the key pair it accepts besides S3RVER/S3RVER),
//      S3_BUCKETS="a,b" (created at start), S3_VERBOSE=1 (log requests),
//      S3_ALLOW_UNSIGNED_PAYLOAD=1 (accept UNSIGNED-PAYLOAD on a PUT or POST too, as S3 does)
// Objects land in DATA_DIR/BUCKET/KEY._S3rver_object, with KEY._S3rver_metadata.json beside.
//
// The payload hash (s3rver 4.0.4 only puts x-amz-content-sha256 into the signature; here, as in
// S3, it is also checked against the bytes): every request signed with an AWS4-HMAC-SHA256
// Authorization header is read whole before s3rver sees it, and
// - a hex x-amz-content-sha256 that is not the SHA-256 of the body (lowercase hex, as SigV4
//   writes it) gets 400 XAmzContentSHA256Mismatch, with both hashes in the XML as S3 gives them,
//   and nothing is stored; this is checked before the signature (S3 checks it after: a request
//   wrong in both gets 400 here where S3 says 403 SignatureDoesNotMatch);
// - a missing x-amz-content-sha256 gets 400 InvalidRequest (s3rver, as S3);
// - UNSIGNED-PAYLOAD (or STREAMING-*) on a PUT or POST gets 400 InvalidRequest: stricter than S3,
//   which accepts it, because rtrack always sends the hash and an upload that stopped doing so
//   must fail; on reads (GET, HEAD, ...) it is accepted, as S3 does.
// Limits (see shared/reference/test-infrastructure.md §1): unsigned requests (no Authorization)
// are accepted, so tests must prove signing with a wrong secret; virtual-hosted requests are
// rejected.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const { Readable } = require('stream');
const S3rver = require('@20minutes/s3rver');
const AWSAccount = require('@20minutes/s3rver/lib/models/account');
const S3Error = require('@20minutes/s3rver/lib/models/error');

const [dir, port = '0', portFile] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node s3-server.js DATA_DIR PORT|0 [PORTFILE]');
  process.exit(2);
}
AWSAccount.DUMMY_ACCOUNT.createKeyPair(process.env.S3_TEST_KEY || 'AKIDTEST',
                                       process.env.S3_TEST_SECRET || 'testsecret');
const buckets = (process.env.S3_BUCKETS || 'test-bucket').split(',').filter(Boolean);
const allowUnsigned = process.env.S3_ALLOW_UNSIGNED_PAYLOAD === '1';

// An S3 error answered as s3rver answers its own (XML, the status S3 gives that code).
function s3Error(status, code, message, detail) {
  const err = new S3Error(code, message, detail);
  err.status = status;
  err.expose = true;
  return err;
}

// The request s3rver goes on with: the same head, and the body read here, again from its start.
function replay(req, body) {
  const r = Readable.from(body.length ? [body] : [], { objectMode: false });
  for (const k of ['headers', 'rawHeaders', 'trailers', 'rawTrailers', 'method', 'url',
                   'httpVersion', 'httpVersionMajor', 'httpVersionMinor', 'socket', 'complete',
                   'baseUrl']) {
    r[k] = req[k];
  }
  return r;
}

// Koa middleware, run before s3rver's own: the payload-hash rules of the header comment.
async function payloadHash(ctx, next) {
  if (!/^AWS4-HMAC-SHA256 /i.test(ctx.get('authorization'))) return next();
  const claimed = ctx.get('x-amz-content-sha256');
  const writes = ctx.method === 'PUT' || ctx.method === 'POST';
  if (!/^[0-9A-Fa-f]{64}$/.test(claimed)) {
    if (writes && !allowUnsigned && /^(UNSIGNED-PAYLOAD|STREAMING-)/.test(claimed)) {
      throw s3Error(400, 'InvalidRequest',
                    'this test server wants the SHA-256 of the body in x-amz-content-sha256 ' +
                    'for a PUT or POST, not ' + claimed);
    }
    return next(); // missing or malformed: s3rver answers as S3 does
  }
  const chunks = [];
  for await (const c of ctx.req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const computed = crypto.createHash('sha256').update(body).digest('hex');
  if (claimed !== computed) {
    throw s3Error(400, 'XAmzContentSHA256Mismatch',
                  "The provided 'x-amz-content-sha256' header does not match what was computed.",
                  { ClientComputedContentSHA256: claimed, S3ComputedContentSHA256: computed });
  }
  const r = replay(ctx.req, body);
  ctx.req = ctx.request.req = ctx.response.req = r;
  return next();
}

const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory: dir,
  silent: !process.env.S3_VERBOSE,
  vhostBuckets: false,
  configureBuckets: buckets.map((name) => ({ name, configs: [] })),
});
// after s3rver's request logger (so refused requests are logged too), before everything else;
// Koa composes the list when the server starts listening
server.middleware.splice(1, 0, payloadHash);
server
  .run()
  .then(({ address, port }) => {
    // write then rename, so a reader never sees a half-written port number
    if (portFile) {
      fs.writeFileSync(portFile + '.tmp', String(port));
      fs.renameSync(portFile + '.tmp', portFile);
    }
    console.log('S3rver listening on %s:%d', address, port);
  })
  .catch((e) => {
    console.error('s3-server: %s', e && e.message ? e.message : e);
    process.exit(1);
  });
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
// If whoever started us dies without stopping us (a ctest timeout SIGKILLs with-s3.sh, so its
// EXIT trap never runs), leave too rather than linger as an orphan holding a port.
const parent = process.ppid;
setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch (e) {
    if (e.code === 'ESRCH') process.exit(0);
  }
}, 1000).unref();

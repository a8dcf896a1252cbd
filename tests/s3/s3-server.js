// tests/s3/s3-server.js - a local S3 that verifies SigV4 (header auth), path-style only.
// usage: node s3-server.js DATA_DIR PORT|0 [PORTFILE]
// env: S3_TEST_KEY, S3_TEST_SECRET (the key pair it accepts besides S3RVER/S3RVER),
//      S3_BUCKETS="a,b" (created at start), S3_VERBOSE=1 (log requests)
// Objects land in DATA_DIR/BUCKET/KEY._S3rver_object, with KEY._S3rver_metadata.json beside.
// Limits (see shared/reference/test-infrastructure.md §1): unsigned requests are accepted and
// the payload hash is not checked against the body, so tests must prove signing with a wrong
// secret; virtual-hosted requests are rejected.
'use strict';
const fs = require('fs');
const S3rver = require('@20minutes/s3rver');
const AWSAccount = require('@20minutes/s3rver/lib/models/account');

const [dir, port = '0', portFile] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node s3-server.js DATA_DIR PORT|0 [PORTFILE]');
  process.exit(2);
}
AWSAccount.DUMMY_ACCOUNT.createKeyPair(process.env.S3_TEST_KEY || 'AKIDTEST',
                                       process.env.S3_TEST_SECRET || 'testsecret');
const buckets = (process.env.S3_BUCKETS || 'test-bucket').split(',').filter(Boolean);
new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory: dir,
  silent: !process.env.S3_VERBOSE,
  vhostBuckets: false,
  configureBuckets: buckets.map((name) => ({ name, configs: [] })),
})
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

// Reads the decodings `idkit decode --json` printed (one JSON object a line) and checks that
// each scheme's reference implementation accepts the same id and reads the same time (and,
// for TypeID, the same prefix and UUID; for TSID, the same node and counter bits).
// Run by scripts/crosscheck.sh, which installs the packages.
const fs = require('fs');
const { TypeID } = require('typeid-js');
const { ObjectId } = require('bson');
const { TSID } = require('tsid-ts');

const cases = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map(JSON.parse);
const counts = {};
let failed = 0;

function check(c, ok, what) {
    if (!ok) {
        failed += 1;
        console.log(`MISMATCH ${c.scheme} ${c.id}: ${what}`);
    }
}

for (const c of cases) {
    counts[c.scheme] = (counts[c.scheme] || 0) + 1;
    if (c.scheme === 'typeid') {
        const t = TypeID.fromString(c.id);
        check(c, t.getType() === c.fields.prefix, `prefix ${t.getType()} vs ${c.fields.prefix}`);
        check(c, t.toUUID() === c.fields.uuid, `uuid ${t.toUUID()} vs ${c.fields.uuid}`);
        check(c, t.toString() === c.id, `text ${t.toString()}`);
        // A UUIDv7's first 48 bits are its Unix milliseconds.
        const ms = parseInt(t.toUUID().replace(/-/g, '').slice(0, 12), 16);
        check(c, ms === c.timestamp_ms, `time ${ms} vs ${c.timestamp_ms}`);
    } else if (c.scheme === 'objectid') {
        const o = ObjectId.createFromHexString(c.id);
        check(c, o.toHexString() === c.id, `text ${o.toHexString()}`);
        const ms = o.getTimestamp().getTime();
        check(c, ms === c.timestamp_ms, `time ${ms} vs ${c.timestamp_ms}`);
    } else if (c.scheme === 'tsid') {
        const t = TSID.fromString(c.id);
        check(c, t.toString() === c.id, `text ${t.toString()}`);
        check(c, t.timestamp === c.timestamp_ms, `time ${t.timestamp} vs ${c.timestamp_ms}`);
        // Default 10 node bits: the 22 random bits are node << 12 | counter.
        const random = c.fields.node * 4096 + c.fields.counter;
        check(c, t.random === random, `random ${t.random} vs ${random}`);
    } else {
        throw new Error(`no reference implementation for ${c.scheme}`);
    }
}
for (const [scheme, n] of Object.entries(counts)) {
    console.log(`${scheme}: ${n} ids checked`);
}
if (failed > 0) {
    console.log(`${failed} mismatches`);
    process.exit(1);
}
console.log(`${cases.length} passed, 0 failed`);

// Cross-checks idkit's UUID versions against the `uuid` npm package (v1, v3, v5, v6, v7,
// v1ToV6, v6ToV1, version, validate). Usage: node uuids.cjs IDKIT, with the package installed
// beside this file. Run by scripts/crosscheck.sh.
//
// - ids the package makes (v1 and v6 at a fixed time, clock sequence and node; v7 at a fixed
//   millisecond; v3 and v5 of random names) are read by `idkit decode` with the same time
//   and fields, and `idkit uuid-name` makes the same v3 and v5 ids;
// - ids idkit makes (v6, v7) are valid to the package, of the same version, and the package's
//   v6ToV1 and v1ToV6 agree with `idkit convert`.
const { execFileSync } = require('child_process');
const uuid = require('uuid');

const IDKIT = process.argv[2];
const GREGORIAN_TO_UNIX_MS = 12219292800000;
const counts = {};
let failed = 0;

function idkit(...args) {
    return execFileSync(IDKIT, args, { encoding: 'utf8' }).trim();
}

function decode(version, id) {
    const text = idkit('decode', `uuid-v${version}`, id, '--json');
    const d = JSON.parse(text);
    // 60-bit tick counts pass 2^53: read them from the text, exactly.
    const ticks = text.match(/"ticks_100ns_since_1582":(\d+)/);
    if (ticks) d.ticks = BigInt(ticks[1]);
    return d;
}

function check(what, ok, detail) {
    counts[what] = (counts[what] || 0) + 1;
    if (!ok) {
        failed += 1;
        console.log(`MISMATCH ${what}: ${detail}`);
    }
}

function randomBytes(n) {
    return Array.from({ length: n }, () => Math.floor(Math.random() * 256));
}

// v1 and v6 at a fixed time: msecs since 1970 and nsecs (100 ns ticks within the ms).
for (let i = 0; i < 30; i++) {
    const msecs = 1_600_000_000_000 + Math.floor(Math.random() * 200_000_000_000);
    const nsecs = Math.floor(Math.random() * 10_000);
    const clockseq = Math.floor(Math.random() * 0x4000);
    const node = randomBytes(6);
    const nodeHex = node.map((b) => b.toString(16).padStart(2, '0')).join('');
    const ticks = (BigInt(msecs) + BigInt(GREGORIAN_TO_UNIX_MS)) * 10000n + BigInt(nsecs);
    for (const [version, make] of [[1, uuid.v1], [6, uuid.v6]]) {
        const id = make({ msecs, nsecs, clockseq, node });
        const d = decode(version, id);
        check(`v${version}`, d.timestamp_ms === msecs, `${id}: time ${d.timestamp_ms} vs ${msecs}`);
        check(`v${version}`, d.ticks === ticks, `${id}: ticks ${d.ticks} vs ${ticks}`);
        check(`v${version}`, d.fields.clock_seq === clockseq, `${id}: clock_seq`);
        check(`v${version}`, d.fields.node === nodeHex, `${id}: node`);
    }
    const v1 = uuid.v1({ msecs, nsecs, clockseq, node });
    check('v1<->v6', idkit('convert', 'uuid-v1', 'uuid-v6', v1) === uuid.v1ToV6(v1), v1);
}

// v7 at a fixed millisecond.
for (let i = 0; i < 30; i++) {
    const msecs = 1_600_000_000_000 + Math.floor(Math.random() * 200_000_000_000);
    const id = uuid.v7({ msecs });
    check('v7', decode(7, id).timestamp_ms === msecs, `${id}: time`);
}

// v3 and v5 of random names, in the four RFC namespaces and a random one.
const namespaces = { dns: uuid.v5.DNS, url: uuid.v5.URL };
for (let i = 0; i < 30; i++) {
    const name = Array.from({ length: Math.floor(Math.random() * 40) },
        () => String.fromCodePoint(0x20 + Math.floor(Math.random() * 0x2e0))).join('');
    const key = ['dns', 'url', 'random'][i % 3];
    const ns = key === 'random' ? uuid.v4() : namespaces[key];
    const arg = key === 'random' ? ns : key;
    for (const [version, make, flags] of [[3, uuid.v3, ['--v3']], [5, uuid.v5, []]]) {
        const theirs = make(name, ns);
        const ours = idkit('uuid-name', ...flags, '--', arg, name);
        check(`v${version}`, ours === theirs, `${arg} ${JSON.stringify(name)}: ${ours} vs ${theirs}`);
    }
}

// idkit's v6 and v7 ids, read by the package.
for (const version of [6, 7]) {
    for (const id of idkit('gen', `uuid-v${version}`, '-n', '30').split(/\s+/)) {
        check(`idkit v${version}`, uuid.validate(id) && uuid.version(id) === version, id);
        if (version === 6) {
            const v1 = uuid.v6ToV1(id);
            check('idkit v6->v1', idkit('convert', 'uuid-v6', 'uuid-v1', id) === v1, id);
        }
    }
}

const summary = Object.entries(counts).map(([k, v]) => `${k}: ${v}`).join(', ');
console.log(`uuid (npm): ${summary} checks, ${failed} failed`);
process.exit(failed ? 1 : 0);

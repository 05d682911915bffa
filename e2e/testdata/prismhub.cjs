// prismhub runs many Prism validating proxies in one Node process for the contract run (make
// contract): what `prism proxy --errors <spec> <upstream>` starts, one per surface and test, minus
// the cost of each start (Node loading Prism, then Prism reading the spec: about 3.8 s of CPU per
// proxy). Each spec's operations are read once and shared by its proxies.
//
// It reads commands on stdin, one per line:
//   start <id> <spec file> <upstream URL>   a proxy on 127.0.0.1, a port of its own
//   stop <id>                               close it (connections still open end with it)
// and writes on stdout, one line each, prefixed by the proxy's id:
//   <id> listening <URL> | <id> failed <reason> | <id> stopped | <id> log <Prism's JSON log line>
// The log lines are Prism's own (pino, at info as the CLI logs), so a violation reads as there:
// "Violation: ..." or "Request terminated with error: ...". It exits when stdin closes.
'use strict';

const { Writable } = require('stream');
const readline = require('readline');
const { createLogger } = require('@stoplight/prism-core');
const { getHttpOperationsFromSpec } = require('@stoplight/prism-http');
const { createServer } = require('@stoplight/prism-http-server');

const operations = new Map(); // spec file -> Promise of its operations
const servers = new Map(); // id -> server

function say(id, what) {
  process.stdout.write(`${id} ${what}\n`);
}

// logTo is a pino destination that writes each log line on stdout under id.
function logTo(id) {
  let rest = '';
  return new Writable({
    write(chunk, _enc, done) {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (line !== '') say(id, `log ${line}`);
      }
      done();
    },
  });
}

async function start(id, spec, upstream) {
  if (!operations.has(spec)) operations.set(spec, getHttpOperationsFromSpec(spec));
  const ops = await operations.get(spec);
  if (ops.length === 0) throw new Error(`no operations in ${spec}`);
  // As the CLI's proxy command with --errors: requests and responses validated, security checked,
  // a violation answered with Prism's error instead of the upstream's response; CORS on.
  const config = {
    validateRequest: true,
    validateResponse: true,
    checkSecurity: true,
    errors: true,
    upstreamProxy: undefined,
    mock: { dynamic: false, ignoreExamples: false, seed: undefined },
    isProxy: true,
    upstream: new URL(upstream),
  };
  const logger = createLogger('CLI', { level: 'info' }, logTo(id));
  const server = createServer(ops, {
    cors: true,
    config,
    components: { logger: logger.child({ name: 'HTTP SERVER' }) },
  });
  const address = await server.listen(0, '127.0.0.1');
  servers.set(id, server);
  return address;
}

const commands = readline.createInterface({ input: process.stdin });
commands.on('line', line => {
  const [verb, id, ...args] = line.trim().split(/\s+/);
  if (verb === 'start' && id && args.length === 2) {
    start(id, args[0], args[1]).then(
      address => say(id, `listening ${address}`),
      err => say(id, `failed ${String(err && err.message ? err.message : err).replace(/\n/g, ' ')}`),
    );
  } else if (verb === 'stop' && id) {
    const server = servers.get(id);
    servers.delete(id);
    if (!server) {
      say(id, 'stopped');
      return;
    }
    // close waits for open connections; the test's client is done with them, so answer at once.
    server.close().catch(() => {});
    say(id, 'stopped');
  } else if (line.trim() !== '') {
    say('-', `failed unknown command: ${line}`);
  }
});
commands.on('close', () => process.exit(0));

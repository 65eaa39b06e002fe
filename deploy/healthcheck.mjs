// Container health probe: GET http://127.0.0.1:<port>/healthz, exit 0 on 200.
// Port: first argument, else HEALTHCHECK_PORT, else 8080 (ingest, and the
// all-in-one `singleshot start`). No curl/wget in the slim image, so node it is.
import { get } from 'node:http';

const port = Number(process.argv[2] ?? process.env.HEALTHCHECK_PORT ?? 8080);
const request = get({ host: '127.0.0.1', port, path: '/healthz', timeout: 4000 }, (response) => {
  response.resume();
  process.exit(response.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error('timeout')));
request.on('error', (err) => {
  console.error(`healthcheck: ${err.message}`);
  process.exit(1);
});

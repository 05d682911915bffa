// @ts-check
/**
 * What the SDK tests share: where each surface is, and a fetch that fails on contract violations
 * reported by Prism when the tests run behind it (`make contract`).
 *
 * @module
 */

/**
 * baseUrl is where the tests reach surface: TRIAD_<SURFACE>_URL, set by the Go harness
 * (e2e.TestTypeScriptSDK) to the server or, in contract mode, to the surface's Prism proxy, or
 * (e2e.TestTypeScriptSDK_AgainstMock) to the surface's `make mock`.
 *
 * @param {string} surface a spec's name in api/ (orders, brands, auth, and any surface added since)
 * @returns {string}
 */
export function baseUrl(surface) {
  const name = `TRIAD_${surface.toUpperCase()}_URL`;
  const url = process.env[name];
  if (!url) {
    throw new Error(`${name} is not set: run these tests through 'go test ./e2e -run TestTypeScriptSDK'`);
  }
  return url;
}

/**
 * mock is true when the suite runs against `make mock` (Prism serving each spec's examples:
 * e2e.TestTypeScriptSDK_AgainstMock, `make sdk-mock`) instead of a server. The mock keeps no
 * state, so where the server's answer follows from what came before, the suite expects the
 * spec's example instead (`expected`), and a refusal that only state would cause is asked of the
 * mock with Prism's Prefer header (`refusal`). docs/specs.md lists each difference.
 */
export const mock = process.env.TRIAD_SDK_AGAINST === "mock";

/**
 * expected is what a check expects: fromServer against the server, fromMock (the spec's example)
 * against the mock.
 *
 * @template T
 * @param {T} fromServer
 * @param {T} fromMock
 * @returns {T}
 */
export function expected(fromServer, fromMock) {
  return mock ? fromMock : fromServer;
}

/**
 * refusal is the request option that asks the mock for the documented refusal of the given status
 * (and named example, where the status has several), which the server answers from its state:
 * Prism's `Prefer: code=<status>, example=<name>`. Against the server it adds nothing.
 *
 * @param {number} status
 * @param {string} [example]
 * @returns {{ headers?: Record<string, string> }}
 */
export function refusal(status, example) {
  return mock ? { headers: { Prefer: `code=${status}` + (example ? `, example=${example}` : "") } } : {};
}

/**
 * env returns a required environment variable.
 *
 * @param {string} name
 * @returns {string}
 */
export function env(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set`);
  }
  return v;
}

/**
 * checkedFetch is the fetch every SDK client in the tests uses. Prism, in validating proxy mode,
 * lists violations in the sl-violations header (even mere warnings such as an undocumented status)
 * and answers its own problem document when it refuses a request or a response; either fails the
 * request here, so the test that sent it fails.
 *
 * @param {Request} request
 * @returns {Promise<Response>}
 */
export async function checkedFetch(request) {
  const response = await fetch(request);
  const violations = response.headers.get("sl-violations");
  if (violations) {
    throw new Error(`${request.method} ${request.url} -> ${response.status} violates the spec: ${violations}`);
  }
  if ((response.headers.get("content-type") ?? "").startsWith("application/problem+json")) {
    const body = await response.clone().text();
    if (body.includes("https://stoplight.io/prism/errors#")) {
      throw new Error(`Prism refused ${request.method} ${request.url}: ${body}`);
    }
  }
  return response;
}

// @ts-check
// What the SDK's client puts on the wire, seen by a local HTTP server that echoes each request:
// path parameters encoded, query and header parameters, JSON and form bodies, the bearer token,
// and how answers become data or error. And what the compiler refuses: the `@ts-expect-error`
// lines below fail `make check-sdk` as soon as a mistake they make stops being a type error.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import { CookieJar, createAuthClient } from "../auth/index.js";
import { FORM, createBrandsClient } from "../brands/index.js";
import { createOrdersClient } from "../orders/index.js";

/** @type {import("node:http").Server} */
let server;
let baseUrl = "";

before(async () => {
  // The echo server answers every request with what it received, with the status asked for in
  // X-Echo-Status (204 answers no body).
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const status = Number(req.headers["x-echo-status"] ?? 200);
      if (req.headers["x-echo-binary"]) {
        // Every byte value once, most of them invalid as UTF-8: text decoding would change them.
        res.writeHead(200, { "Content-Type": "image/png" }).end(Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
        return;
      }
      if (status === 204) {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const addr = server.address();
  assert.ok(addr && typeof addr === "object");
  // A trailing slash on baseUrl is not doubled.
  baseUrl = `http://127.0.0.1:${addr.port}/`;
});

after(() => server.close());

/**
 * echo reads what the echo server saw from a call's answer.
 *
 * @param {{ data?: unknown, error?: unknown }} r
 * @returns {{ method: string, url: string, headers: Record<string, string>, body: string }}
 */
function echo(r) {
  return /** @type {any} */ (r.data ?? r.error);
}

test("path parameters are percent-encoded into the path", async () => {
  const api = createBrandsClient({ baseUrl });
  const r = await api.GET("/api/brand/{id}", { params: { path: { id: "a b/c?d" } } });
  assert.equal(echo(r).url, "/api/brand/a%20b%2Fc%3Fd");
});

test("query parameters are sent, and undefined ones left out", async () => {
  const api = createAuthClient({ baseUrl });
  const r = await api.GET("/auth/{provider}/login", {
    params: { path: { provider: "local" }, query: { user: "demo user", passwd: undefined, session: "1" } },
  });
  assert.equal(echo(r).method, "GET");
  assert.equal(echo(r).url, "/auth/local/login?user=demo+user&session=1");
});

test("header parameters, the client's headers and a call's headers all go out", async () => {
  const api = createOrdersClient({ baseUrl, token: "tok-1", headers: { "X-Request-Id": "req-1" } });
  const r = await api.GET("/authenticated", { headers: { "Accept-Language": "en" } });
  assert.equal(echo(r).headers.authorization, "Bearer tok-1");
  assert.equal(echo(r).headers["x-request-id"], "req-1");
  assert.equal(echo(r).headers["accept-language"], "en");

  const auth = createAuthClient({ baseUrl });
  const me = await auth.GET("/auth/user", { params: { header: { "X-XSRF-TOKEN": "xsrf-1" } } });
  assert.equal(echo(me).headers["x-xsrf-token"], "xsrf-1");
});

test("a body goes as the spec takes it: a form where it takes only a form, JSON otherwise, a form with FORM", async () => {
  const orders = createOrdersClient({ baseUrl });
  const json = await orders.POST("/users", { body: { username: "bob", password: "bob-password", userType: "Customer" } });
  assert.equal(echo(json).headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(echo(json).body), { username: "bob", password: "bob-password", userType: "Customer" });

  // The token request takes only a form; the caller says nothing about it.
  const token = await orders.POST("/oauth/token", { body: { grant_type: "password", username: "a b", password: "p&q" } });
  assert.equal(echo(token).headers["content-type"], "application/x-www-form-urlencoded");
  assert.equal(echo(token).body, "grant_type=password&username=a+b&password=p%26q");

  const brands = createBrandsClient({ baseUrl });
  const form = await brands.POST("/api/user/login", { body: { email: "a+b@example.com", password: "p&q=r" }, ...FORM });
  assert.equal(echo(form).headers["content-type"], "application/x-www-form-urlencoded");
  assert.equal(echo(form).body, "email=a%2Bb%40example.com&password=p%26q%3Dr");
});

test("every surface takes its token the same way, as the surface sends it", async () => {
  for (const [name, api, header, value] of /** @type {const} */ ([
    ["orders", createOrdersClient({ baseUrl, token: "t-1" }).GET("/authenticated"), "authorization", "Bearer t-1"],
    ["brands", createBrandsClient({ baseUrl, token: () => "t-2" }).GET("/api/user/me"), "authorization", "Bearer t-2"],
    ["auth", createAuthClient({ baseUrl, token: "t-3" }).GET("/auth/user"), "x-jwt", "t-3"],
  ])) {
    assert.equal(echo(await api).headers[header], value, name);
  }
  // The token request authenticates the OAuth client, never with a user's bearer token.
  const grant = createOrdersClient({ baseUrl, token: "t-1" }).POST("/oauth/token", {
    body: { grant_type: "password", client_id: "c", client_secret: "s", username: "u", password: "p" },
  });
  assert.equal(echo(await grant).headers.authorization, undefined, "a bearer token went to /oauth/token");
  // No token, no header.
  assert.equal(echo(await createOrdersClient({ baseUrl, token: () => undefined }).GET("/authenticated")).headers.authorization, undefined);
});

test("a cookie jar keeps what the server sets and the auth client echoes XSRF-TOKEN", async () => {
  const cookies = new CookieJar();
  const api = createAuthClient({ baseUrl, cookies });
  const fake = new Response(null, { headers: [["Set-Cookie", "JWT=j1; Path=/; HttpOnly"], ["Set-Cookie", "XSRF-TOKEN=x1; Path=/"]] });
  cookies.store(fake);
  const r = await api.GET("/auth/user");
  assert.equal(echo(r).headers.cookie, "JWT=j1; XSRF-TOKEN=x1");
  assert.equal(echo(r).headers["x-xsrf-token"], "x1");
  // A call's own header wins; a cleared cookie is dropped.
  const own = await api.GET("/auth/user", { params: { header: { "X-XSRF-TOKEN": "mine" } } });
  assert.equal(echo(own).headers["x-xsrf-token"], "mine");
  cookies.store(new Response(null, { headers: [["Set-Cookie", "JWT=; Max-Age=0"]] }));
  assert.equal(cookies.header(), "XSRF-TOKEN=x1");
  // One line joining two cookies (a proxy's, or the mock's example) is both; an Expires date's
  // comma does not split.
  cookies.store(new Response(null, { headers: [["Set-Cookie", "JWT=j2; Path=/; Expires=Thu, 01 Jan 2099 00:00:00 GMT; HttpOnly, XSRF-TOKEN=x2; Path=/"]] }));
  assert.equal(cookies.header(), "XSRF-TOKEN=x2; JWT=j2");
});

test("a binary answer (an avatar) is a Blob of the exact bytes, typed so", async () => {
  const api = createAuthClient({ baseUrl });
  const r = await api.GET("/avatar/{id}", { params: { path: { id: "0b4a6e2f3c9d.image" } }, headers: { "X-Echo-Binary": "1" } });
  assert.ok(r.data, `no data: ${r.response.status}`);
  /** @type {Blob} */
  const image = r.data; // a string here would not type-check
  const bytes = new Uint8Array(await image.arrayBuffer());
  assert.equal(bytes.length, 256);
  assert.ok(bytes.every((b, i) => b === i), "the bytes changed on the way");
  assert.equal(image.type, "image/png");
});

test("a 2xx answer is data, anything else is error, and 204 has no data", async () => {
  const api = createOrdersClient({ baseUrl });
  const ok = await api.GET("/authenticated");
  assert.equal(ok.response.status, 200);
  assert.ok(ok.data && !ok.error);

  const refused = await api.GET("/authenticated", { headers: { "X-Echo-Status": "409" } });
  assert.equal(refused.response.status, 409);
  assert.ok(refused.error && !refused.data);

  const empty = await api.GET("/authenticated", { headers: { "X-Echo-Status": "204" } });
  assert.equal(empty.response.status, 204);
  assert.equal(empty.data, undefined);
});

test("the compiler holds calls to the spec", () => {
  const orders = createOrdersClient({ baseUrl });
  // Never called: these lines are for the type checker, each must stay an error.
  const mistakes = () => [
    // @ts-expect-error no such path
    orders.GET("/nowhere"),
    // @ts-expect-error no GET on this path
    orders.GET("/orders/{id}/take", { params: { path: { id: 1 } } }),
    // @ts-expect-error the path parameter is required
    orders.PATCH("/orders/{id}/take"),
    // @ts-expect-error an id is a number
    orders.PATCH("/orders/{id}/take", { params: { path: { id: "1" } } }),
    // @ts-expect-error the price is required
    orders.POST("/orders", { body: { description: "no price" } }),
    // @ts-expect-error userType is an enum
    orders.POST("/users", { body: { username: "u", password: "p", userType: "Admin" } }),
  ];
  // The table of form bodies is held to the spec: leaving out the token request does not compile.
  /** @type {import("../core/client.js").FormRoutes<import("../orders/schema.js").paths>} */
  // @ts-expect-error POST /oauth/token takes only a form
  const forms = {};
  assert.equal(typeof mistakes, "function");
  assert.deepEqual(forms, {});
});

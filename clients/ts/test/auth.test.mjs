// @ts-check
// The auth service through the TypeScript SDK, as a browser app uses it: log in with the dev-mode
// direct provider, then call the session routes with the JWT cookie and the X-XSRF-TOKEN header.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createAuthClient } from "../auth/index.js";
import { baseUrl, checkedFetch } from "./env.mjs";

const api = createAuthClient({ baseUrl: baseUrl("auth"), fetch: checkedFetch });

/**
 * cookies reads the name=value pairs a response sets.
 *
 * @param {Response} response
 * @returns {Map<string, string>}
 */
function cookies(response) {
  const jar = new Map();
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const i = pair.indexOf("=");
    jar.set(pair.slice(0, i).trim(), pair.slice(i + 1));
  }
  return jar;
}

test("the demo user logs in and the session identifies them", async () => {
  const providers = await api.GET("/auth/list");
  assert.deepEqual(providers.data, ["dev", "local"]);

  const refused = await api.POST("/auth/{provider}/login", {
    params: { path: { provider: "local" } },
    body: { user: "demo", passwd: "wrong-password" },
  });
  assert.equal(refused.response.status, 403);
  assert.equal(refused.error && "code" in refused.error ? refused.error.code : undefined, "bad_credentials");

  const login = await api.POST("/auth/{provider}/login", {
    params: { path: { provider: "local" } },
    body: { user: "demo", passwd: "demo-password" },
  });
  assert.equal(login.data?.name, "demo");
  const jar = cookies(login.response);
  const jwt = jar.get("JWT");
  const xsrf = jar.get("XSRF-TOKEN");
  assert.ok(jwt && xsrf, "login sets the JWT and XSRF-TOKEN cookies");

  const me = await api.GET("/auth/user", {
    params: { header: { "X-XSRF-TOKEN": xsrf } },
    headers: { Cookie: `JWT=${jwt}; XSRF-TOKEN=${xsrf}` },
  });
  assert.equal(me.data?.name, "demo");
  assert.equal(me.data?.id, login.data?.id);

  const status = await api.GET("/auth/status", { headers: { Cookie: `JWT=${jwt}` }, params: { header: { "X-XSRF-TOKEN": xsrf } } });
  assert.deepEqual(status.data, { status: "logged in", user: "demo" });
});

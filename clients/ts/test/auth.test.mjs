// @ts-check
// The auth service through the TypeScript SDK, as a browser app uses it: log in with the dev-mode
// direct provider, then call the session routes with the JWT cookie and the X-XSRF-TOKEN header.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CookieJar, createAuthClient } from "../auth/index.js";
import { baseUrl, checkedFetch, refusal } from "./env.mjs";

test("the demo user logs in and the session identifies them", async () => {
  // Node keeps no cookies of its own: the client's jar holds the session and the XSRF token.
  const cookies = new CookieJar();
  const api = createAuthClient({ baseUrl: baseUrl("auth"), fetch: checkedFetch, cookies });
  const providers = await api.GET("/auth/list");
  assert.deepEqual(providers.data, ["dev", "local"]);

  const refused = await api.POST("/auth/{provider}/login", {
    params: { path: { provider: "local" } },
    body: { user: "demo", passwd: "wrong-password" },
    ...refusal(403),
  });
  assert.equal(refused.response.status, 403);
  assert.equal(refused.error && "code" in refused.error ? refused.error.code : undefined, "bad_credentials");

  const login = await api.POST("/auth/{provider}/login", {
    params: { path: { provider: "local" } },
    body: { user: "demo", passwd: "demo-password" },
  });
  assert.equal(login.data?.name, "demo");
  assert.ok(cookies.get("JWT") && cookies.get("XSRF-TOKEN"), "login set the JWT and XSRF-TOKEN cookies in the jar");

  // The client sends the cookies and echoes XSRF-TOKEN in X-XSRF-TOKEN by itself.
  const me = await api.GET("/auth/user");
  assert.equal(me.data?.name, "demo");
  assert.equal(me.data?.id, login.data?.id);

  const status = await api.GET("/auth/status");
  assert.deepEqual(status.data, { status: "logged in", user: "demo" });

  // Without the echo the session is refused: the double-submit check is the server's.
  const bare = await api.GET("/auth/user", { headers: { "X-XSRF-TOKEN": "wrong", ...refusal(401).headers } });
  assert.equal(bare.response.status, 401);
});

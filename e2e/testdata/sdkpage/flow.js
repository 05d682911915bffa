// A single-page app on its own origin using the packed @triad/sdk (served under /sdk/ from the
// unpacked tarball), as e2e.TestSDKCrossOrigin drives it in headless Chromium. Each check throws
// with what it saw, so a failure names the step; the Go test then checks the returned values.
import { createAuthClient, xsrfToken } from "/sdk/auth/index.js";
import { FORM, createBrandsClient } from "/sdk/brands/index.js";
import { createOrdersClient, passwordGrant } from "/sdk/orders/index.js";

function check(ok, what) {
  if (!ok) {
    throw new Error(what);
  }
}

// ordersFlow signs a customer and a performer up and in (OAuth 2.0 password grant), and runs an
// order through the state machine: the customer places it, the performer takes it and passes it
// on as done, the customer accepts it and pays.
async function ordersFlow({ api, clientId, clientSecret, suffix }) {
  const anon = createOrdersClient({ baseUrl: api });
  async function signUp(role, userType) {
    const username = `web-${role}-${suffix}`;
    const password = `${username}-password`;
    const reg = await anon.POST("/users", { body: { username, password, userType } });
    check(reg.response.status === 201, `register ${username}: ${reg.response.status} ${JSON.stringify(reg.error)}`);
    const grant = await passwordGrant(anon, { clientId, clientSecret, username, password });
    check(grant.data, `token ${username}: ${grant.response.status} ${JSON.stringify(grant.error)}`);
    return { user: reg.data, username, password, api: createOrdersClient({ baseUrl: api, token: grant.data.access_token }) };
  }
  const customer = await signUp("customer", "Customer");
  const performer = await signUp("performer", "Performer");

  // Placed with an Idempotency-Key (a header the preflight must allow) and sent again: the repeat
  // answers the first order, marked Idempotent-Replayed (a header the page must be able to read).
  const order = { params: { header: { "Idempotency-Key": `web-${suffix}-${Date.now()}-${Math.random()}` } }, body: { description: "Ordered from another origin", price: 100 } };
  const created = await customer.api.POST("/orders", order);
  check(created.response.status === 201, `create: ${created.response.status} ${JSON.stringify(created.error)}`);
  const id = created.data.id;
  const repeated = await customer.api.POST("/orders", order);
  check(repeated.response.status === 201, `create again: ${repeated.response.status} ${JSON.stringify(repeated.error)}`);
  const statuses = [created.data.status];
  const steps = [
    [performer, "/orders/{id}/take"],
    [performer, "/orders/{id}/pass"],
    [customer, "/orders/{id}/accept"],
  ];
  for (const [who, path] of steps) {
    const r = await who.api.PATCH(path, { params: { path: { id } } });
    check(r.data, `${path}: ${r.response.status} ${JSON.stringify(r.error)}`);
    statuses.push(r.data.status);
  }
  check(statuses.join() === "WAITING,IN PROGRESS,READY,COMPLETED", `statuses ${statuses}`);
  // A refusal reaches the page too: its body is readable cross-origin, with the documented code.
  const again = await customer.api.PATCH("/orders/{id}/accept", { params: { path: { id } } });
  check(again.response.status === 409 && again.error?.code === "invalid_state", `accept twice: ${again.response.status}`);
  const me = await customer.api.GET("/authenticated");
  check(me.data, `authenticated: ${me.response.status}`);
  return {
    orderId: id,
    statuses,
    customer: { id: customer.user.id, username: customer.username, password: customer.password },
    performerId: performer.user.id,
    balance: String(me.data.balance),
    requestId: again.response.headers.get("X-Request-Id"),
    firstReplayed: created.response.headers.get("Idempotent-Replayed"),
    repeat: { id: repeated.data.id, replayed: repeated.response.headers.get("Idempotent-Replayed") },
  };
}

// brandsFlow registers and logs in (form bodies), then reads the profile with the access token.
async function brandsFlow({ api, suffix }) {
  const brands = createBrandsClient({ baseUrl: api });
  const email = `web-${suffix}@brands.test`;
  const password = "web-brands-password";
  const reg = await brands.POST("/api/user/register", { body: { name: "Web User", email, password }, ...FORM });
  check(reg.response.status === 201, `brands register: ${reg.response.status} ${JSON.stringify(reg.error)}`);
  const login = await brands.POST("/api/user/login", { body: { email, password }, ...FORM });
  check(login.data, `brands login: ${login.response.status}`);
  const me = await brands.GET("/api/user/me", { params: { query: { access_token: login.data.token } } });
  check(me.data?.email === email, `brands me: ${me.response.status}`);
  return { email: me.data.email };
}

// authFlow logs in with the direct provider, the session in cookies the browser keeps, then calls
// a route that needs the user: without the X-XSRF-TOKEN header it is refused, with it it answers.
async function authFlow({ api }) {
  const auth = createAuthClient({ baseUrl: api, credentials: "include" });
  const login = await auth.POST("/auth/{provider}/login", {
    params: { path: { provider: "local" } },
    body: { user: "demo", passwd: "demo-password" },
  });
  check(login.data?.name === "demo", `auth login: ${login.response.status} ${JSON.stringify(login.error)}`);
  const xsrf = xsrfToken();
  check(xsrf, `no XSRF-TOKEN cookie in ${JSON.stringify(document.cookie)}`);
  // The client echoes the cookie by itself; a call that sends another value is refused.
  const withoutHeader = await auth.GET("/auth/user", { params: { header: { "X-XSRF-TOKEN": "not-the-cookie" } } });
  const me = await auth.GET("/auth/user");
  check(me.data?.name === "demo", `auth user: ${me.response.status} ${JSON.stringify(me.error)}`);
  const status = await auth.GET("/auth/status", { params: { header: { "X-XSRF-TOKEN": xsrf } } });
  return {
    user: me.data.name,
    id: me.data.id,
    withoutHeader: withoutHeader.response.status,
    status: status.data,
    // The JWT cookie is HttpOnly: the page holds the session without being able to read it.
    jwtReadable: document.cookie.split(";").some((c) => c.trim().startsWith("JWT=")),
  };
}

// runFlow runs the three surfaces' flows against the server at config.api.
window.runFlow = async (config) => ({
  orders: await ordersFlow(config),
  brands: await brandsFlow(config),
  auth: await authFlow(config),
});

// probe makes the calls a page makes first on each surface and reports, for each, "read <status>"
// when the page could read the answer, or the error fetch rejected with.
window.probe = async ({ api, suffix }) => {
  const out = {};
  const calls = {
    // A simple request (no preflight): the server answers, but the browser hides the answer.
    simple: () => createAuthClient({ baseUrl: api }).GET("/auth/list"),
    // A JSON POST: the browser asks first (preflight) and, refused, never sends the request.
    preflighted: () =>
      createOrdersClient({ baseUrl: api }).POST("/users", {
        body: { username: `web-probe-${suffix}`, password: "web-probe-password", userType: "Customer" },
      }),
  };
  for (const [name, call] of Object.entries(calls)) {
    try {
      const r = await call();
      out[name] = `read ${r.response.status}`;
    } catch (e) {
      out[name] = String(e.name);
    }
  }
  return out;
};

window.sdkLoaded = true;

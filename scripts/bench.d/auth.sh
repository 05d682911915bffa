# Auth load pair for scripts/bench.sh (sourced; T, B and pair come from there): the dev server's
# GET /auth/user with a cookie token and its XSRF header (spec validation, middleware chain, token
# verification, JSON) against the baseline server's bare chi handler parsing the same HS256 cookie.
auth_jar=$(mktemp)
curl -fs -c "$auth_jar" -H 'Content-Type: application/json' -d '{"user":"demo","passwd":"demo-password"}' "$T/auth/local/login" >/dev/null
auth_jwt=$(awk '$6 == "JWT" {print $7}' "$auth_jar")
auth_xsrf=$(awk '$6 == "XSRF-TOKEN" {print $7}' "$auth_jar")
rm -f "$auth_jar"
pair "GET /auth/user (cookie+XSRF) vs bare HS256 parse" "$T/auth/user" "$B/jwt" -H "Cookie: JWT=$auth_jwt; XSRF-TOKEN=$auth_xsrf" -H "X-XSRF-TOKEN: $auth_xsrf"

# Auth load pair for scripts/bench.sh (sourced; T, B, srv_pid, base_pid, CONNS and wrk come from
# there): the dev server's GET /auth/user with a cookie token and its XSRF header (the shared
# middleware chain, the auth router, token verification, JSON) against the baseline server's bare chi
# handler parsing the same HS256 cookie with golang-jwt.
#
# Fairness on a small shared machine, where a neighbour's burst moves a single 5 s run by ±30%:
# both servers get the same wrk (threads, connections, headers), in AUTH_ROUNDS short rounds that
# alternate which side goes first (ABBA), and the figure is the median of the per-round ratios, so a
# burst lands in one round instead of deciding the result. Each run also reads the server process's
# own CPU time (/proc/<pid>/stat) to report CPU per request, a second ratio that contention moves less
# than throughput.
auth_jar=$(mktemp)
curl -fs -c "$auth_jar" -H 'Content-Type: application/json' -d '{"user":"demo","passwd":"demo-password"}' "$T/auth/local/login" >/dev/null
auth_jwt=$(awk '$6 == "JWT" {print $7}' "$auth_jar")
auth_xsrf=$(awk '$6 == "XSRF-TOKEN" {print $7}' "$auth_jar")
rm -f "$auth_jar"
auth_hdr=(-H "Cookie: JWT=$auth_jwt; XSRF-TOKEN=$auth_xsrf" -H "X-XSRF-TOKEN: $auth_xsrf")
# Both endpoints must answer 200 to these exact headers, or the pair would compare refusals.
curl -fs "${auth_hdr[@]}" "$T/auth/user" >/dev/null || { echo "auth: /auth/user refused the bench token" >&2; exit 1; }
curl -fs "${auth_hdr[@]}" "$B/jwt" >/dev/null || { echo "auth: baseline /jwt refused the bench token" >&2; exit 1; }

# auth_run PID URL prints "requests/s cpu-µs-per-request" for one wrk run against the server PID.
auth_run() {
  local pid=$1 url=$2 c0 c1 out
  c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  out=$(wrk -t2 -c"$CONNS" -d"${AUTH_DURATION:-2s}" "${auth_hdr[@]}" "$url")
  c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  # wrk counts non-2xx answers separately; a run with any is not a measurement of the happy path.
  if grep -q 'Non-2xx' <<<"$out"; then echo "auth: non-2xx answers from $url" >&2; return 1; fi
  python3 -c "
import os, sys
rps = float('$(awk '/Requests\/sec/ {print $2}' <<<"$out")')
n = int('$(awk '/requests in/ {print $1}' <<<"$out")')
print(rps, ($c1 - $c0) * 1e6 / os.sysconf('SC_CLK_TCK') / max(n, 1))"
}

auth_rounds=${AUTH_ROUNDS:-8}
auth_ratios=()
auth_cpu_ratios=()
auth_ours=()
auth_base=()
for ((i = 0; i < auth_rounds; i++)); do
  if ((i % 2 == 0)); then
    read -r b bc < <(auth_run "$base_pid" "$B/jwt"); read -r o oc < <(auth_run "$srv_pid" "$T/auth/user")
  else
    read -r o oc < <(auth_run "$srv_pid" "$T/auth/user"); read -r b bc < <(auth_run "$base_pid" "$B/jwt")
  fi
  [[ -n ${o:-} && -n ${b:-} ]] || { echo "auth: a wrk run failed" >&2; exit 1; }
  auth_ours+=("$o"); auth_base+=("$b")
  auth_ratios+=("$(python3 -c "print($o / $b)")")
  auth_cpu_ratios+=("$(python3 -c "print($bc / max($oc, 1e-9))")")
done
python3 - "${auth_ours[*]}" "${auth_base[*]}" "${auth_ratios[*]}" "${auth_cpu_ratios[*]}" <<'EOF'
import statistics as st, sys
ours, base, ratios, cpu = ([float(x) for x in a.split()] for a in sys.argv[1:5])
print(f"{'GET /auth/user (cookie+XSRF) vs bare HS256 parse':<40} {st.median(ours):12.0f} req/s  baseline {st.median(base):12.0f} req/s  "
      f"ratio {st.median(ratios):.2f}x (median of {len(ratios)} interleaved rounds; range {min(ratios):.2f}-{max(ratios):.2f})  "
      f"cpu/request ratio {st.median(cpu):.2f}x")
EOF

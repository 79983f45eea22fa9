/*
 * Telemetry through the C ABI, end to end (the C counterpart of core/tests/telemetry.rs): a C
 * client calls a C server's tool over HTTP in the same process while the spans and metrics go
 * over OTLP/HTTP to the test collector tests/otel/collector.py (a child process, decoding with
 * OpenTelemetry's own protobuf definitions; bindings-c/tests/run.sh creates its venv with
 * tests/otel/setup.sh and names its python in MCPAXLE_OTEL_PYTHON and the script in
 * MCPAXLE_OTEL_COLLECTOR). Shown:
 * - off (the default): a handler's `trace` is null, the server's metricsPath answers 503;
 * - mcpaxle_telemetry_configure: a call whose call options carry the application's
 *   traceparent in `meta` makes a client span, child of the application's span, and a server
 *   span, child of the client span, with MCP's semantic-convention attributes; the handler's
 *   `trace` names the server span;
 * - an unknown tool: the JSON-RPC code as `error.type`, the spans' status error, `_OTHER` for the
 *   name in the server span's name;
 * - a known load: the duration histograms count every call; the Prometheus text (the
 *   function and the metricsPath route) has them;
 * - mcpaxle_telemetry_shutdown: off again.
 * Telemetry is process-wide, so the tests run in order and build on each other.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

/* The application's span the client's call joins (W3C's example ids). */
#define APP_TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define APP_SPAN "00f067aa0ba902b7"

/* ---- the collector -------------------------------------------------------------------------- */

static pid_t collector_pid;
static int collector_out = -1;
static uint16_t collector_port;

/* Starts tests/otel/collector.py and reads the port it listens on ("PORT n"). */
static bool start_collector(void) {
    const char *python = getenv("MCPAXLE_OTEL_PYTHON"), *script = getenv("MCPAXLE_OTEL_COLLECTOR");
    if (!python || access(python, X_OK) != 0 || !script || access(script, R_OK) != 0) {
        fprintf(stderr, "  MCPAXLE_OTEL_PYTHON (an executable python with the collector's packages) and "
                        "MCPAXLE_OTEL_COLLECTOR (tests/otel/collector.py) must be set: run bindings-c/tests/run.sh, "
                        "which runs tests/otel/setup.sh\n");
        return false;
    }
    int fds[2];
    if (pipe(fds) != 0) return false;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *argv[] = {(char *)python, (char *)script, NULL};
    extern char **environ;
    int rc = posix_spawn(&collector_pid, python, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        fprintf(stderr, "  the collector could not be started: %s\n", strerror(rc));
        close(fds[0]);
        collector_pid = 0;
        return false;
    }
    collector_out = fds[0];
    char *line = read_line_fd(collector_out);
    unsigned port = 0;
    bool ok = sscanf(line, "PORT %u", &port) == 1 && port > 0 && port < 65536;
    if (ok) collector_port = (uint16_t)port;
    else fprintf(stderr, "  the collector did not start: \"%s\"\n", line);
    free(line);
    return ok;
}

static void stop_collector(void) {
    if (collector_pid > 0) {
        kill(collector_pid, SIGTERM);
        waitpid(collector_pid, NULL, 0);
        collector_pid = 0;
    }
    if (collector_out >= 0) close(collector_out), collector_out = -1;
}

/* The body of a request to the collector (free it), NULL unless 200. */
static char *collector(const char *method, const char *path) {
    struct http_response r = http_request(collector_port, method, path, "", strcmp(method, "POST") == 0 ? "" : NULL);
    char *body = r.status == 200 ? r.body : NULL;
    if (body) r.body = NULL;
    http_response_free(&r);
    return body;
}

/* The elements of the JSON array `json`, each its own string, NULL-terminated (free it with
 * free_items): walking a long list element by element with mcpaxle_json_get would parse the
 * whole list once per element. */
static char **split_array(const char *json) {
    size_t cap = 16, n = 0;
    char **items = calloc(cap + 1, sizeof *items);
    const char *p = json ? json + strspn(json, " \t\r\n") : "";
    if (*p++ != '[') return items;
    for (;;) {
        p += strspn(p, " \t\r\n,");
        if (*p == ']' || *p == '\0') break;
        const char *start = p;
        int depth = 0;
        bool in_string = false;
        for (; *p; p++) {
            if (in_string) {
                if (*p == '\\' && p[1]) p++;
                else if (*p == '"') in_string = false;
            } else if (*p == '"') {
                in_string = true;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (depth-- == 0) break;
            } else if (*p == ',' && depth == 0) {
                break;
            }
        }
        size_t len = (size_t)(p - start);
        while (len && strchr(" \t\r\n", start[len - 1])) len--;
        if (n == cap) items = realloc(items, ((cap *= 2) + 1) * sizeof *items);
        items[n++] = strndup(start, len);
        items[n] = NULL;
    }
    return items;
}

static void free_items(char **items) {
    for (char **i = items; *i; i++) free(*i);
    free(items);
}

/* What the collector holds at `path` ("/spans", "/metrics"), after a flush: the elements of
 * the list it answers (see split_array); none when it did not answer. */
static char **collected(const char *path) {
    CHECK_RC(mcpaxle_telemetry_flush(), MCPAXLE_OK);
    char *body = collector("GET", path), **items = split_array(body);
    size_t n = 0;
    while (items[n]) n++;
    CHECK(body != NULL);
    CHECK(!body || json_count(body, "") == n); /* split as the JSON parser reads it */
    free(body);
    return items;
}

/* The string (or number, as its text) at `pointer` of `json` equals `want`. */
static bool text_is(const char *json, const char *pointer, const char *want) {
    char *v = json_text(json, pointer);
    bool same = v && strcmp(v, want) == 0;
    free(v);
    return same;
}

/* The first span (its JSON object; free it) the collector holds of `trace` (any when NULL)
 * named `name` of kind `kind` ("client", "server"), flushing and asking the collector until
 * it has one (20 s at most); NULL when none came. */
static char *wait_for_span(const char *trace, const char *name, const char *kind) {
    for (int i = 0; i < 100; i++) {
        char **spans = collected("/spans"), *found = NULL;
        for (char **s = spans; *s && !found; s++) {
            if ((!trace || text_is(*s, "/traceId", trace)) && text_is(*s, "/name", name) && text_is(*s, "/kind", kind)) {
                found = strdup(*s);
            }
        }
        free_items(spans);
        if (found) return found;
        sleep_ms(200);
    }
    fprintf(stderr, "  the collector never received a %s span \"%s\" of trace %s\n", kind, name, trace ? trace : "(any)");
    return NULL;
}

/* The largest count of the histogram `metric`'s points for tool `tool` without an error (the
 * temporality is cumulative: the latest export has the largest). */
static unsigned long long lookup_count(char **points, const char *metric, const char *tool) {
    unsigned long long most = 0;
    for (char **p = points; *p; p++) {
        if (text_is(*p, "/name", metric) && text_is(*p, "/attributes/gen_ai.tool.name", tool)) {
            char *error = json_value(*p, "/attributes/error.type"), *count = json_value(*p, "/count");
            unsigned long long c = count ? strtoull(count, NULL, 10) : 0;
            if (!error && c > most) most = c;
            free(error), free(count);
        }
    }
    return most;
}

/* The count as lookup_count reads it once it is at least `want`, flushing and asking the
 * collector until then (20 s at most); the last count seen when it never got there (and the
 * metric's points, on stderr). */
static unsigned long long wait_for_count(const char *metric, const char *tool, unsigned long long want) {
    unsigned long long got = 0;
    char **points = NULL;
    for (int i = 0; i < 100; i++) {
        if (points) free_items(points);
        points = collected("/metrics");
        got = lookup_count(points, metric, tool);
        if (got >= want) break;
        sleep_ms(200);
    }
    if (got < want) {
        fprintf(stderr, "  %s of %s counted %llu calls, never %llu; its latest points:\n", metric, tool, got, want);
        size_t n = 0;
        while (points[n]) n++;
        for (size_t i = n, shown = 0; i-- > 0 && shown < 6;) {
            if (text_is(points[i], "/name", metric)) fprintf(stderr, "    %.400s\n", points[i]), shown++;
        }
    }
    free_items(points);
    return got;
}

/* The value of the latest point of the sum `metric` whose attribute `key` is `value` (its JSON
 * text; free it), or NULL. */
static char *latest_value(const char *metric, const char *key, const char *value) {
    char **points = collected("/metrics"), *attr = fmt("/attributes/%s", key), *latest = NULL;
    size_t n = 0;
    while (points[n]) n++;
    for (size_t i = n; i-- > 0 && !latest;) {
        if (text_is(points[i], "/name", metric) && text_is(points[i], attr, value)) latest = json_value(points[i], "/value");
    }
    free_items(points), free(attr);
    return latest;
}

/* ---- the server and the client -------------------------------------------------------------- */

/* What the last lookup's handler saw: its `trace` (JSON, "null" when none), the traceparent of
 * its `_meta`, its request id and protocol version (as text). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char *seen_trace, *seen_meta_traceparent, *seen_request_id, *seen_version;
static atomic_int lookups;

static void forget_seen(void) {
    pthread_mutex_lock(&seen_lock);
    free(seen_trace), free(seen_meta_traceparent), free(seen_request_id), free(seen_version);
    seen_trace = seen_meta_traceparent = seen_request_id = seen_version = NULL;
    pthread_mutex_unlock(&seen_lock);
}

static void lookup_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *info = NULL;
    mcpaxle_context_info(ctx, &info);
    pthread_mutex_lock(&seen_lock);
    free(seen_trace), free(seen_meta_traceparent), free(seen_request_id), free(seen_version);
    seen_trace = info ? json_value(info, "/trace") : NULL;
    seen_meta_traceparent = info ? json_text(info, "/meta/traceparent") : NULL;
    seen_request_id = info ? json_text(info, "/requestId") : NULL;
    seen_version = info ? json_text(info, "/protocolVersion") : NULL;
    pthread_mutex_unlock(&seen_lock);
    mcpaxle_string_free(info);
    atomic_fetch_add(&lookups, 1);
    reply_text(c, "found");
}

static mcpaxle_server *server;
static mcpaxle_http_server *http;
static uint16_t port;
static mcpaxle_client *client;

/* Calls lookup with `options` (may be NULL); whether it answered "found". */
static bool call_lookup(const mcpaxle_call_options *options) {
    char *out = NULL;
    mcpaxle_result rc = mcpaxle_client_call_tool(client, "lookup", "{}", options, &out);
    if (rc != MCPAXLE_OK) fprintf(stderr, "  lookup: %s: %s\n", mcpaxle_result_name(rc), mcpaxle_last_error_message());
    char *text = out ? json_text(out, "/content/0/text") : NULL;
    bool ok = rc == MCPAXLE_OK && text && strcmp(text, "found") == 0;
    free(text), mcpaxle_string_free(out);
    return ok;
}

/* Whether the server's metricsPath answers `status` with a body containing `needle`. */
static bool scrape_is(int status, const char *needle) {
    struct http_response r = http_request(port, "GET", "/metrics", "", NULL);
    bool ok = r.status == status && r.body && strstr(r.body, needle) != NULL;
    if (!ok) fprintf(stderr, "  GET /metrics: %d, wanted %d with \"%s\": %.300s\n", r.status, status, needle, r.body ? r.body : "");
    http_response_free(&r);
    return ok;
}

/* ---- the tests ------------------------------------------------------------------------------ */

TEST(off_by_default) {
    forget_seen();
    CHECK(call_lookup(NULL));
    pthread_mutex_lock(&seen_lock);
    CHECK_STR(seen_trace, "null");
    CHECK(seen_meta_traceparent == NULL); /* nothing injected */
    pthread_mutex_unlock(&seen_lock);
    CHECK(scrape_is(503, "prometheus: true"));
    char *text = (char *)1;
    CHECK_RC(mcpaxle_telemetry_prometheus_text(&text), MCPAXLE_OK);
    CHECK(text == NULL);
    if (text != (char *)1) mcpaxle_string_free(text);
    CHECK_RC(mcpaxle_telemetry_flush(), MCPAXLE_OK); /* a no-op while off */
}

TEST(configure_refuses_bad_options) {
    CHECK_RC(mcpaxle_telemetry_configure("{bad"), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_telemetry_configure("{\"sampleRatio\":2}"), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "sampleRatio") != NULL);
    CHECK_RC(mcpaxle_telemetry_configure("{\"nope\":1}"), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_telemetry_prometheus_text(NULL), MCPAXLE_ERR_NULL);
    /* Still off. */
    forget_seen();
    CHECK(call_lookup(NULL));
    pthread_mutex_lock(&seen_lock);
    CHECK_STR(seen_trace, "null");
    pthread_mutex_unlock(&seen_lock);
}

TEST(a_call_crosses_client_and_server_spans_of_the_applications_trace) {
    char *options = fmt("{\"endpoint\":\"http://127.0.0.1:%u\",\"serviceName\":\"mcpaxle-c\",\"metricsIntervalMs\":1000,"
                        "\"prometheus\":true}",
                        (unsigned)collector_port);
    CHECK_RC(mcpaxle_telemetry_configure(options), MCPAXLE_OK);
    free(options);

    /* The application's span, as its traceparent in the call's meta. */
    mcpaxle_call_options *co = NULL;
    CHECK_RC(mcpaxle_call_options_new("{\"meta\":{\"traceparent\":\"00-" APP_TRACE "-" APP_SPAN "-01\"}}", &co), MCPAXLE_OK);
    forget_seen();
    CHECK(call_lookup(co));
    mcpaxle_call_options_free(co);
    pthread_mutex_lock(&seen_lock);
    char *trace = seen_trace ? strdup(seen_trace) : NULL;
    char *meta_traceparent = seen_meta_traceparent ? strdup(seen_meta_traceparent) : NULL;
    char *request_id = seen_request_id ? strdup(seen_request_id) : NULL;
    char *version = seen_version ? strdup(seen_version) : NULL;
    pthread_mutex_unlock(&seen_lock);
    char *handler_traceparent = trace ? json_text(trace, "/traceparent") : NULL;
    CHECK(handler_traceparent != NULL);

    char *client_span = wait_for_span(APP_TRACE, "tools/call lookup", "client");
    char *server_span = wait_for_span(APP_TRACE, "tools/call lookup", "server");
    CHECK(client_span != NULL && server_span != NULL);
    if (client_span && server_span) {
        char *client_id = json_text(client_span, "/spanId"), *server_id = json_text(server_span, "/spanId");
        /* The tree: the application's span -> the client's -> the server's -> the handler. */
        CHECK_JSON(client_span, "/parentSpanId", APP_SPAN);
        CHECK_JSON(server_span, "/parentSpanId", client_id ? client_id : "?");
        CHECK(client_id && server_id && strlen(server_id) == 16 && strcmp(client_id, server_id) != 0);
        char *want = fmt("00-%s-%s-01", APP_TRACE, server_id ? server_id : "?");
        CHECK_STR(handler_traceparent, want);
        free(want);
        /* The client injected its own span's context into the request's _meta. */
        want = fmt("00-%s-%s-01", APP_TRACE, client_id ? client_id : "?");
        CHECK_STR(meta_traceparent, want);
        free(want);

        CHECK_JSON(server_span, "/service", "mcpaxle-c");
        CHECK_JSON(client_span, "/service", "mcpaxle-c");
        CHECK_JSON(server_span, "/status/code", "unset");
        CHECK_JSON(server_span, "/attributes/mcp.method.name", "tools/call");
        CHECK_JSON(server_span, "/attributes/gen_ai.tool.name", "lookup");
        CHECK_JSON(server_span, "/attributes/gen_ai.operation.name", "execute_tool");
        CHECK_JSON(server_span, "/attributes/mcp.protocol.version", "2026-07-28");
        CHECK_JSON(server_span, "/attributes/network.transport", "tcp");
        CHECK_JSON(server_span, "/attributes/network.protocol.name", "http");
        CHECK_STR(version, "2026-07-28");
        /* The request's JSON-RPC id, as the handler saw it. */
        CHECK_JSON(server_span, "/attributes/jsonrpc.request.id", request_id ? request_id : "(no request id)");
        char *error = json_value(server_span, "/attributes/error.type"), *principal = json_value(server_span, "/attributes/enduser.id");
        CHECK(error == NULL);
        CHECK(principal == NULL); /* not unless recordPrincipal */
        free(error), free(principal);
        CHECK_JSON(client_span, "/attributes/mcp.method.name", "tools/call");
        CHECK_JSON(client_span, "/attributes/gen_ai.tool.name", "lookup");
        CHECK_JSON(client_span, "/attributes/gen_ai.operation.name", "execute_tool");
        free(client_id), free(server_id);
    }
    free(client_span), free(server_span), free(trace), free(meta_traceparent), free(request_id), free(version);
    free(handler_traceparent);
}

TEST(an_unknown_tool_records_its_json_rpc_code) {
    free(collector("POST", "/reset"));
    char *out = NULL;
    CHECK_RC(mcpaxle_client_call_tool(client, "missing", "{}", NULL, &out), MCPAXLE_ERR_INVALID_PARAMS);
    mcpaxle_string_free(out);
    mcpaxle_error *err = mcpaxle_last_error();
    char *code = fmt("%d", (int)mcpaxle_error_code(err));
    mcpaxle_error_free(err);
    CHECK_STR(code, "-32602");

    /* A new trace (no traceparent given): find it by the client span. */
    char *client_span = wait_for_span(NULL, "tools/call missing", "client"), *server_span = NULL;
    char *trace = client_span ? json_text(client_span, "/traceId") : NULL;
    CHECK(trace != NULL);
    /* A name the server does not have stays out of the server span's name (and the metrics):
     * any client could make up names without end. The name as sent is on the span alone. */
    if (trace) server_span = wait_for_span(trace, "tools/call", "server");
    CHECK(server_span != NULL);
    if (client_span && server_span) {
        char *client_id = json_text(client_span, "/spanId");
        CHECK_JSON(client_span, "/parentSpanId", ""); /* a root: the application gave no trace */
        CHECK_JSON(server_span, "/parentSpanId", client_id ? client_id : "?");
        free(client_id);
        CHECK_JSON(server_span, "/attributes/error.type", code);
        CHECK_JSON(server_span, "/attributes/rpc.response.status_code", code);
        CHECK_JSON(server_span, "/attributes/gen_ai.tool.name", "_OTHER");
        CHECK_JSON(server_span, "/attributes/mcpaxle.request.name", "missing");
        CHECK_JSON(client_span, "/attributes/gen_ai.tool.name", "missing");
        CHECK_JSON(server_span, "/status/code", "error");
        CHECK_JSON(client_span, "/attributes/error.type", code);
        CHECK_JSON(client_span, "/status/code", "error");
    }
    free(client_span), free(server_span), free(trace), free(code);
}

TEST(a_known_load_is_counted_and_scraped) {
    free(collector("POST", "/reset"));
    int before = atomic_load(&lookups);
    for (int i = 0; i < 10; i++) CHECK(call_lookup(NULL));
    CHECK(atomic_load(&lookups) == before + 10);
    /* 11 since configure: the first call of the trace and these 10 (cumulative). */
    const char *metrics[] = {"mcp.server.operation.duration", "mcp.client.operation.duration"};
    for (int i = 0; i < 2; i++) {
        unsigned long long count = wait_for_count(metrics[i], "lookup", 11);
        if (count != 11) fprintf(stderr, "  %s counted %llu lookups, expected 11\n", metrics[i], count);
        CHECK(count == 11);
    }
    /* Every request served has ended: none is still counted as active. */
    char *active = latest_value("mcpaxle.server.active_requests", "mcp.method.name", "tools/call");
    CHECK_STR(active, "0");
    free(active);

    char *text = NULL;
    CHECK_RC(mcpaxle_telemetry_prometheus_text(&text), MCPAXLE_OK);
    CHECK(text && strstr(text, "mcp_server_operation_duration") != NULL);
    CHECK(text && strstr(text, "gen_ai_tool_name=\"lookup\"") != NULL);
    mcpaxle_string_free(text);
    CHECK(scrape_is(200, "mcp_server_operation_duration"));
    CHECK(scrape_is(200, "gen_ai_tool_name=\"lookup\""));
}

TEST(shutdown_turns_it_off_again) {
    CHECK_RC(mcpaxle_telemetry_shutdown(), MCPAXLE_OK);
    forget_seen();
    CHECK(call_lookup(NULL));
    pthread_mutex_lock(&seen_lock);
    CHECK_STR(seen_trace, "null");
    CHECK(seen_meta_traceparent == NULL);
    pthread_mutex_unlock(&seen_lock);
    char *text = NULL;
    CHECK_RC(mcpaxle_telemetry_prometheus_text(&text), MCPAXLE_OK);
    CHECK(text == NULL);
    mcpaxle_string_free(text);
    CHECK(scrape_is(503, "prometheus: true"));
    CHECK_RC(mcpaxle_telemetry_shutdown(), MCPAXLE_OK); /* twice: a no-op */
}

int main(void) {
    /* Telemetry also turns on from the OTEL_* environment as the library starts: keep the
     * caller's environment out of what this test sees. */
    const char *otel[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                          "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
                          "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"};
    for (size_t i = 0; i < sizeof otel / sizeof *otel; i++) unsetenv(otel[i]);
    if (!start_collector()) {
        stop_collector();
        printf("0 passed, 1 failed\n");
        return 1;
    }
    server = new_server(NULL);
    if (mcpaxle_server_add_tool(server, "{\"name\":\"lookup\",\"inputSchema\":{\"type\":\"object\"}}", lookup_tool, NULL) != MCPAXLE_OK ||
        mcpaxle_http_server_start(server, "127.0.0.1:0", "{\"metricsPath\":\"/metrics\"}", &http) != MCPAXLE_OK ||
        mcpaxle_http_server_port(http, &port) != MCPAXLE_OK) {
        fprintf(stderr, "the server did not start: %s\n", mcpaxle_last_error_message());
        abort();
    }
    mcpaxle_client_options *o = NULL;
    mcpaxle_client_options_new("c-telemetry-tests", "1.0", "{\"requestTimeoutMs\":20000}", &o);
    client = connect_local(port, o);
    if (!client) {
        stop_collector();
        printf("0 passed, 1 failed\n");
        return 1;
    }
    RUN(off_by_default);
    RUN(configure_refuses_bad_options);
    RUN(a_call_crosses_client_and_server_spans_of_the_applications_trace);
    RUN(an_unknown_tool_records_its_json_rpc_code);
    RUN(a_known_load_is_counted_and_scraped);
    RUN(shutdown_turns_it_off_again);
    mcpaxle_telemetry_shutdown();
    mcpaxle_client_free(client);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(server);
    forget_seen();
    stop_collector();
    return summary();
}

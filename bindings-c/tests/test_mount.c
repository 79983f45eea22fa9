/*
 * The endpoint mounted in a host's own HTTP server (mcpaxle_mount_*): requests handed over as
 * parts, both eras, an SSE body read chunk by chunk or streamed to a callback, a host that
 * cancels when its client goes away, the statuses of bad requests (those of
 * mcpaxle_http_server_start), and the pointer contract.
 */
#include "harness.h"

static const char *MODERN_META = "\"_meta\":{\"progressToken\":\"p\",\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                                 "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"c-tests\",\"version\":\"1\"},"
                                 "\"io.modelcontextprotocol/clientCapabilities\":{}}";

static void echo_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    mcpaxle_reply_ok(c, "\"echoed\"");
}

static void progress_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    for (int i = 1; i <= 3; i++) mcpaxle_context_progress(ctx, i, 3, "step");
    mcpaxle_reply_ok(c, "\"progressed\"");
}

/* wait: reports progress if asked ({"stream":true}), then waits (at most 10 s) until the
 * request is cancelled, and records whether it was. */
static atomic_int waits_started, waits_cancelled;
static void wait_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud;
    if (strstr(args, "true")) mcpaxle_context_progress(ctx, 1, 2, "waiting");
    atomic_fetch_add(&waits_started, 1);
    for (int i = 0; i < 1000 && !mcpaxle_context_is_cancelled(ctx); i++) sleep_ms(10);
    if (mcpaxle_context_is_cancelled(ctx)) atomic_fetch_add(&waits_cancelled, 1);
    mcpaxle_reply_ok(c, "\"done\"");
}

static mcpaxle_server *mounted_server(void) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"progress\",\"inputSchema\":{\"type\":\"object\"}}", progress_tool, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"wait\",\"inputSchema\":{\"type\":\"object\"}}", wait_tool, NULL), MCPAXLE_OK);
    return s;
}

static char *modern_call(const char *tool, const char *args) {
    return fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s,%s}}", tool, args,
               MODERN_META);
}

/* The response's header `name` (borrowed), or NULL. */
static const char *header_of(const mcpaxle_http_response *r, const char *name) {
    for (size_t i = 0; i < mcpaxle_http_response_header_count(r); i++) {
        const char *n = NULL, *v = NULL;
        if (mcpaxle_http_response_header(r, i, &n, &v) == MCPAXLE_OK && strcmp(n, name) == 0) return v;
    }
    return NULL;
}

/* The whole body, read chunk by chunk (free it); `chunks` counts them. */
static char *read_all(mcpaxle_http_response *r, int *chunks) {
    size_t cap = 256, used = 0;
    char *out = malloc(cap);
    *chunks = 0;
    for (;;) {
        const uint8_t *data = NULL;
        size_t len = 0;
        if (mcpaxle_http_response_read(r, &data, &len) != MCPAXLE_OK || len == 0) break;
        (*chunks)++;
        while (used + len + 1 > cap) out = realloc(out, cap *= 2);
        memcpy(out + used, data, len);
        used += len;
    }
    out[used] = '\0';
    return out;
}

/* A POST of `body` with the modern headers (plus `extra`, `extra_count` more). */
static mcpaxle_result post(mcpaxle_mount *m, const char *body, const mcpaxle_http_header *extra, size_t extra_count,
                           mcpaxle_http_response **out) {
    mcpaxle_http_header h[8] = {{"Host", "127.0.0.1:8080"},
                                {"Content-Type", "application/json"},
                                {"Accept", "application/json, text/event-stream"},
                                {"MCP-Protocol-Version", "2026-07-28"}};
    size_t n = 4;
    for (size_t i = 0; i < extra_count && n < 8; i++) h[n++] = extra[i];
    return mcpaxle_mount_handle(m, "POST", "/apps/mcp", h, n, (const uint8_t *)body, strlen(body), "10.0.0.7:4100", NULL, out);
}

TEST(modern_requests_json_and_sse) {
    mcpaxle_server *s = mounted_server();
    mcpaxle_mount *m = NULL;
    CHECK_RC(mcpaxle_mount_new(s, "{\"allowedHosts\":[\"127.0.0.1\"]}", &m), MCPAXLE_OK);
    mcpaxle_http_response *r = NULL;
    char *body = modern_call("echo", "{}");
    const mcpaxle_http_header echo[] = {{"Mcp-Method", "tools/call"}, {"Mcp-Name", "echo"}};
    CHECK_RC(post(m, body, echo, 2, &r), MCPAXLE_OK);
    free(body);
    CHECK(mcpaxle_http_response_status(r) == 200);
    CHECK_STR(header_of(r, "content-type"), "application/json");
    int chunks = 0;
    char *got = read_all(r, &chunks);
    CHECK(chunks == 1);
    CHECK_JSON(got, "/result/content/0/text", "echoed");
    free(got);
    mcpaxle_http_response_free(r);

    body = modern_call("progress", "{}");
    const mcpaxle_http_header progress[] = {{"Mcp-Method", "tools/call"}, {"Mcp-Name", "progress"}};
    CHECK_RC(post(m, body, progress, 2, &r), MCPAXLE_OK);
    free(body);
    CHECK(mcpaxle_http_response_status(r) == 200);
    CHECK_STR(header_of(r, "content-type"), "text/event-stream");
    got = read_all(r, &chunks);
    CHECK(chunks >= 2);
    CHECK(strstr(got, "notifications/progress") != NULL && strstr(got, "notifications/progress") < strstr(got, "progressed"));
    CHECK_JSON(got, "/result/content/0/text", "progressed");
    free(got);
    mcpaxle_http_response_free(r);
    mcpaxle_mount_free(m);
    mcpaxle_server_free(s);
}

/* mcpaxle_http_response_stream: the whole body to a callback; a callback whose client is gone
 * stops it with MCPAXLE_ERR_CANCELLED. */
struct sink {
    char buf[8192];
    size_t used;
    int calls, fail_at;
};
static int write_sink(void *ud, const uint8_t *data, size_t len) {
    struct sink *k = ud;
    if (++k->calls == k->fail_at) return 1;
    if (k->used + len < sizeof k->buf) memcpy(k->buf + k->used, data, len), k->used += len;
    return 0;
}

TEST(stream_to_a_callback) {
    mcpaxle_server *s = mounted_server();
    mcpaxle_mount *m = NULL;
    CHECK_RC(mcpaxle_mount_new(s, "{\"allowedHosts\":[\"127.0.0.1\"]}", &m), MCPAXLE_OK);
    const mcpaxle_http_header progress[] = {{"Mcp-Method", "tools/call"}, {"Mcp-Name", "progress"}};
    char *body = modern_call("progress", "{}");
    mcpaxle_http_response *r = NULL;
    CHECK_RC(post(m, body, progress, 2, &r), MCPAXLE_OK);
    struct sink k = {.fail_at = 0};
    CHECK_RC(mcpaxle_http_response_stream(r, write_sink, &k), MCPAXLE_OK);
    k.buf[k.used] = '\0';
    CHECK_JSON(k.buf, "/result/content/0/text", "progressed");
    CHECK_RC(mcpaxle_http_response_stream(r, NULL, &k), MCPAXLE_ERR_NULL);
    mcpaxle_http_response_free(r);

    CHECK_RC(post(m, body, progress, 2, &r), MCPAXLE_OK);
    struct sink gone = {.fail_at = 1};
    CHECK_RC(mcpaxle_http_response_stream(r, write_sink, &gone), MCPAXLE_ERR_CANCELLED);
    mcpaxle_http_response_free(r);
    free(body);
    mcpaxle_mount_free(m);
    mcpaxle_server_free(s);
}

TEST(a_legacy_session_at_any_path) {
    mcpaxle_server *s = mounted_server();
    mcpaxle_mount *m = NULL;
    CHECK_RC(mcpaxle_mount_new(s, "{\"allowedHosts\":[\"127.0.0.1\"]}", &m), MCPAXLE_OK);
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                       "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}";
    mcpaxle_http_header h[4] = {
        {"Host", "127.0.0.1:8080"}, {"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}};
    mcpaxle_http_response *r = NULL;
    CHECK_RC(mcpaxle_mount_handle(m, "POST", "/", h, 3, (const uint8_t *)init, strlen(init), NULL, NULL, &r), MCPAXLE_OK);
    CHECK(mcpaxle_http_response_status(r) == 200);
    const char *sid = header_of(r, "mcp-session-id");
    CHECK(sid != NULL);
    char *session = strdup(sid ? sid : "");
    int chunks = 0;
    char *got = read_all(r, &chunks);
    CHECK_JSON(got, "/result/protocolVersion", "2025-11-25");
    free(got);
    mcpaxle_http_response_free(r);

    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{}}}";
    h[3] = (mcpaxle_http_header){"Mcp-Session-Id", session};
    CHECK_RC(mcpaxle_mount_handle(m, "POST", "/", h, 4, (const uint8_t *)call, strlen(call), NULL, NULL, &r), MCPAXLE_OK);
    CHECK(mcpaxle_http_response_status(r) == 200);
    got = read_all(r, &chunks);
    CHECK_JSON(got, "/result/content/0/text", "echoed");
    free(got);
    mcpaxle_http_response_free(r);
    CHECK_RC(mcpaxle_mount_handle(m, "DELETE", "/", h, 4, NULL, 0, NULL, NULL, &r), MCPAXLE_OK);
    CHECK(mcpaxle_http_response_status(r) == 200);
    mcpaxle_http_response_free(r);
    free(session);
    mcpaxle_mount_free(m);
    mcpaxle_server_free(s);
}

/* The host's request thread: mcpaxle_mount_handle with a cancel token, then (if the head came)
 * a read that blocks until the test cancels the response. */
struct host_call {
    mcpaxle_mount *mount;
    mcpaxle_cancel_token *cancel;
    const char *args;
    mcpaxle_result rc;
    mcpaxle_http_response *response;
    atomic_int head;
};
static void *host_thread(void *arg) {
    struct host_call *c = arg;
    const mcpaxle_http_header h[] = {{"Host", "127.0.0.1:8080"},          {"Content-Type", "application/json"},
                                     {"Accept", "application/json, text/event-stream"}, {"MCP-Protocol-Version", "2026-07-28"},
                                     {"Mcp-Method", "tools/call"},          {"Mcp-Name", "wait"}};
    char *body = modern_call("wait", c->args);
    c->rc = mcpaxle_mount_handle(c->mount, "POST", "/mcp", h, 6, (const uint8_t *)body, strlen(body), NULL, c->cancel, &c->response);
    free(body);
    if (c->rc == MCPAXLE_OK) {
        atomic_store(&c->head, 1);
        int chunks = 0;
        free(read_all(c->response, &chunks));
    }
    return NULL;
}

static bool eventually(atomic_int *counter, int want) {
    for (int i = 0; i < 500 && atomic_load(counter) < want; i++) sleep_ms(10);
    return atomic_load(counter) >= want;
}

TEST(a_host_that_cancels_cancels_the_request) {
    mcpaxle_server *s = mounted_server();
    mcpaxle_mount *m = NULL;
    CHECK_RC(mcpaxle_mount_new(s, "{\"allowedHosts\":[\"127.0.0.1\"]}", &m), MCPAXLE_OK);

    /* Before the head: the token. */
    struct host_call before = {.mount = m, .args = "{}"};
    CHECK_RC(mcpaxle_cancel_token_new(&before.cancel), MCPAXLE_OK);
    pthread_t t;
    pthread_create(&t, NULL, host_thread, &before);
    CHECK(eventually(&waits_started, 1));
    mcpaxle_cancel_token_cancel(before.cancel);
    pthread_join(t, NULL);
    CHECK_RC(before.rc, MCPAXLE_ERR_CANCELLED);
    CHECK(before.response == NULL);
    CHECK(eventually(&waits_cancelled, 1));
    mcpaxle_cancel_token_free(before.cancel);

    /* During the SSE stream: the response, while a read blocks on it. */
    struct host_call during = {.mount = m, .args = "{\"stream\":true}"};
    pthread_create(&t, NULL, host_thread, &during);
    CHECK(eventually(&waits_started, 2));
    CHECK(eventually(&during.head, 1));
    CHECK_RC(mcpaxle_http_response_cancel(during.response), MCPAXLE_OK);
    pthread_join(t, NULL);
    CHECK(eventually(&waits_cancelled, 2));
    CHECK_RC(mcpaxle_http_response_cancel(during.response), MCPAXLE_OK);
    mcpaxle_http_response_free(during.response);
    mcpaxle_mount_free(m);
    mcpaxle_server_free(s);
}

/* Each bad request gets, mounted, the status mcpaxle_http_server_start gives it. */
TEST(bad_requests_get_the_statuses_of_the_built_in_server) {
    mcpaxle_server *s = mounted_server();
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    mcpaxle_mount *m = NULL;
    CHECK_RC(mcpaxle_mount_new(s, NULL, &m), MCPAXLE_OK);
    char *good = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{%s}}", MODERN_META);
    char *host = fmt("127.0.0.1:%u", (unsigned)port);
    struct {
        const char *what, *method, *content_type, *accept, *host, *body;
        int status;
    } cases[] = {
        {"a modern request", "POST", "application/json", "application/json, text/event-stream", NULL, good, 200},
        {"GET without a session", "GET", NULL, "text/event-stream", NULL, NULL, 405},
        {"PUT", "PUT", "application/json", "application/json, text/event-stream", NULL, good, 405},
        {"a text/plain body", "POST", "text/plain", "application/json, text/event-stream", NULL, good, 415},
        {"Accept text/html", "POST", "application/json", "text/html", NULL, good, 406},
        {"a body that is not JSON", "POST", "application/json", "application/json, text/event-stream", NULL, "{\"jsonrpc\":", 400},
        {"a foreign Host", "POST", "application/json", "application/json, text/event-stream", "evil.example", good, 403},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mcpaxle_http_header h[5] = {{"Host", cases[i].host ? cases[i].host : host}, {"Accept", cases[i].accept},
                                    {"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/list"}};
        size_t n = 4;
        if (cases[i].content_type) h[n++] = (mcpaxle_http_header){"Content-Type", cases[i].content_type};
        const char *b = cases[i].body;
        mcpaxle_http_response *r = NULL;
        CHECK_RC(mcpaxle_mount_handle(m, cases[i].method, "/mcp", h, n, (const uint8_t *)b, b ? strlen(b) : 0, NULL, NULL, &r), MCPAXLE_OK);
        char *extra = fmt("Accept: %s\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n%s%s%s", cases[i].accept,
                          cases[i].content_type ? "Content-Type: " : "", cases[i].content_type ? cases[i].content_type : "",
                          cases[i].content_type ? "\r\n" : "");
        struct http_response served = http_request(port, cases[i].method, "/mcp", extra, b);
        free(extra);
        if (cases[i].host == NULL) {
            CHECK(served.status == cases[i].status);
        }
        if (mcpaxle_http_response_status(r) != cases[i].status) {
            fprintf(stderr, "  %s: mounted %u, built-in %d, expected %d\n", cases[i].what, mcpaxle_http_response_status(r), served.status,
                    cases[i].status);
            current_failures++;
        }
        http_response_free(&served);
        mcpaxle_http_response_free(r);
    }
    free(good), free(host);
    mcpaxle_mount_free(m);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(the_pointer_contract) {
    mcpaxle_server *s = mounted_server();
    mcpaxle_mount *m = NULL;
    CHECK_RC(mcpaxle_mount_new(NULL, NULL, &m), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_mount_new(s, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_mount_new(s, "{\"port\":1}", &m), MCPAXLE_ERR_USAGE);
    CHECK(m == NULL);
    CHECK_RC(mcpaxle_mount_new(s, "{\"auth\":{}}", &m), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_mount_new(s, NULL, &m), MCPAXLE_OK);
    mcpaxle_http_response *r = NULL;
    const mcpaxle_http_header bad[] = {{"bad name", "v"}};
    CHECK_RC(mcpaxle_mount_handle(m, "PO ST", "/mcp", NULL, 0, NULL, 0, NULL, NULL, &r), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_mount_handle(m, "POST", "/mcp", bad, 1, NULL, 0, NULL, NULL, &r), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "bad name") != NULL);
    CHECK_RC(mcpaxle_mount_handle(m, "POST", "/mcp", NULL, 1, NULL, 0, NULL, NULL, &r), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_mount_handle(m, "POST", "/mcp", NULL, 0, NULL, 5, NULL, NULL, &r), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_mount_handle(m, "POST", "/mcp", NULL, 0, NULL, 0, "not an address", NULL, &r), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_mount_handle(NULL, "POST", "/mcp", NULL, 0, NULL, 0, NULL, NULL, &r), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_mount_handle(m, NULL, "/mcp", NULL, 0, NULL, 0, NULL, NULL, &r), MCPAXLE_ERR_NULL);
    CHECK(r == NULL);
    CHECK(mcpaxle_http_response_status(NULL) == 0);
    CHECK(mcpaxle_http_response_header_count(NULL) == 0);
    const char *n = NULL, *v = NULL;
    CHECK_RC(mcpaxle_http_response_header(NULL, 0, &n, &v), MCPAXLE_ERR_NULL);
    const uint8_t *data = NULL;
    size_t len = 0;
    CHECK_RC(mcpaxle_http_response_read(NULL, &data, &len), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_http_response_cancel(NULL), MCPAXLE_ERR_NULL);
    /* A GET without a session: 405, headers in range only. */
    const mcpaxle_http_header get[] = {{"Host", "localhost"}, {"Accept", "text/event-stream"}};
    CHECK_RC(mcpaxle_mount_handle(m, "GET", "/mcp", get, 2, NULL, 0, "::1", NULL, &r), MCPAXLE_OK);
    CHECK(mcpaxle_http_response_status(r) == 405);
    size_t count = mcpaxle_http_response_header_count(r);
    CHECK(count > 0);
    CHECK_RC(mcpaxle_http_response_header(r, count, &n, &v), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_http_response_header(r, 0, NULL, &v), MCPAXLE_ERR_NULL);
    CHECK_STR(header_of(r, "allow"), "POST");
    mcpaxle_http_response_free(r);
    mcpaxle_http_response_free(NULL);
    mcpaxle_mount_free(m);
    mcpaxle_mount_free(NULL);
    mcpaxle_server_free(s);
}

int main(int argc, char **argv) {
    (void)argc;
    self_path = argv[0];
    RUN(modern_requests_json_and_sse);
    RUN(stream_to_a_callback);
    RUN(a_legacy_session_at_any_path);
    RUN(a_host_that_cancels_cancels_the_request);
    RUN(bad_requests_get_the_statuses_of_the_built_in_server);
    RUN(the_pointer_contract);
    return summary();
}

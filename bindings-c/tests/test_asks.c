/*
 * C tests of MRTR asks without a key (a NULL key is the core's next automatic key, as in
 * Python and Node): the keys a modern round sends, its retry answered under them, and a legacy
 * session where each ask is a real request to a C client. Run by bindings-c/tests/run.sh under
 * valgrind.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#define FORM(message) \
    "{\"mode\":\"form\",\"message\":\"" message "\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}"

struct record {
    mcpaxle_result codes[8];
};

/* Two elicitations, a sample and the roots without keys, and one elicitation with a key. */
static void auto_keys_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args;
    struct record *r = ud;
    char *first = NULL, *second = NULL, *sample = NULL, *roots = NULL, *mine = NULL;
    r->codes[0] = mcpaxle_context_elicit(ctx, NULL, FORM("First?"), &first);
    r->codes[1] = mcpaxle_context_elicit(ctx, NULL, FORM("Second?"), &second);
    r->codes[2] = mcpaxle_context_sample(
        ctx, NULL, "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],\"maxTokens\":5}", &sample);
    r->codes[3] = mcpaxle_context_list_roots(ctx, NULL, &roots);
    r->codes[4] = mcpaxle_context_elicit(ctx, "mine", FORM("Mine?"), &mine);
    mcpaxle_result failed = MCPAXLE_OK;
    for (int i = 0; i < 5 && failed == MCPAXLE_OK; i++) failed = r->codes[i];
    if (failed != MCPAXLE_OK) {
        r->codes[5] = mcpaxle_reply_propagate(c, failed);
    } else {
        char *a = NULL, *b = NULL, *model = NULL, *root = NULL, *m = NULL;
        mcpaxle_json_get_string(first, "/action", &a);
        mcpaxle_json_get_string(second, "/action", &b);
        mcpaxle_json_get_string(sample, "/model", &model);
        mcpaxle_json_get_string(roots, "/roots/0/uri", &root);
        mcpaxle_json_get_string(mine, "/action", &m);
        char *text = fmt("%s %s %s %s %s", a, b, model, root, m);
        r->codes[5] = reply_text(c, text);
        free(text);
        mcpaxle_string_free(a), mcpaxle_string_free(b), mcpaxle_string_free(model), mcpaxle_string_free(root),
            mcpaxle_string_free(m);
    }
    mcpaxle_string_free(first), mcpaxle_string_free(second), mcpaxle_string_free(sample), mcpaxle_string_free(roots),
        mcpaxle_string_free(mine);
}

TEST(a_null_key_is_the_next_automatic_key) {
    struct record r = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\"}}", auto_keys_tool, &r), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    char *body = mcp(port, "tools/call", "ask", "\"name\":\"ask\"", NULL);
    CHECK_JSON(body, "/result/resultType", "input_required");
    CHECK_JSON(body, "/result/inputRequests/elicitation_1/params/message", "First?");
    CHECK_JSON(body, "/result/inputRequests/elicitation_2/params/message", "Second?");
    CHECK_JSON(body, "/result/inputRequests/sampling_1/method", "sampling/createMessage");
    CHECK_JSON(body, "/result/inputRequests/roots_1/method", "roots/list");
    CHECK_JSON(body, "/result/inputRequests/mine/params/message", "Mine?");
    for (int i = 0; i < 5; i++) CHECK_RC(r.codes[i], MCPAXLE_INPUT_REQUIRED);
    CHECK_RC(r.codes[5], MCPAXLE_OK);
    free(body);
    memset(&r, 0, sizeof r);

    /* The retry runs the handler again: the same asks get the same keys, and their answers. */
    body = mcp(port, "tools/call", "ask",
               "\"name\":\"ask\",\"inputResponses\":{"
               "\"elicitation_1\":{\"action\":\"accept\",\"content\":{}},"
               "\"elicitation_2\":{\"action\":\"decline\"},"
               "\"sampling_1\":{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"hi\"},\"model\":\"m\"},"
               "\"roots_1\":{\"roots\":[{\"uri\":\"file:///tmp\"}]},"
               "\"mine\":{\"action\":\"cancel\"}}",
               NULL);
    CHECK_JSON(body, "/result/content/0/text", "accept decline m file:///tmp cancel");
    for (int i = 0; i < 6; i++) CHECK_RC(r.codes[i], MCPAXLE_OK);
    free(body);

    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

/* ---- a legacy session: each ask is a request to the client, answered by these ------------ */

static atomic_int asked;

static void on_elicitation(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud;
    atomic_fetch_add(&asked, 1);
    mcpaxle_reply_ok(c, strstr(params, "Second?") ? "{\"action\":\"decline\"}" : "{\"action\":\"accept\",\"content\":{}}");
}

static void on_sampling(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    atomic_fetch_add(&asked, 1);
    mcpaxle_reply_ok(c, "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"x\"},\"model\":\"legacy-model\"}");
}

static void on_roots(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    atomic_fetch_add(&asked, 1);
    mcpaxle_reply_ok(c, "{\"roots\":[{\"uri\":\"file:///legacy\"}]}");
}

/* A client callback cannot complete with bytes. */
static mcpaxle_result bytes_reply;

static void elicitation_with_bytes(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    bytes_reply = mcpaxle_reply_bytes(c, (const uint8_t *)"x", 1);
}

static mcpaxle_client *connect_legacy(uint16_t port, mcpaxle_input_handler elicitation) {
    mcpaxle_client_options *o = NULL;
    CHECK_RC(mcpaxle_client_options_new("asks", "1.0", "{\"protocolVersions\":[\"2025-11-25\"],\"requestTimeoutMs\":20000}", &o),
             MCPAXLE_OK);
    mcpaxle_client_options_on_elicitation(o, elicitation, NULL);
    mcpaxle_client_options_on_sampling(o, on_sampling, NULL);
    mcpaxle_client_options_on_roots(o, on_roots, NULL);
    return connect_local(port, o);
}

TEST(a_null_key_in_a_legacy_session_asks_the_client) {
    struct record r = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\"}}", auto_keys_tool, &r), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    mcpaxle_client *c = connect_legacy(port, on_elicitation);
    char *out = NULL;
    if (c) {
        CHECK_RC(mcpaxle_client_call_tool(c, "ask", "{}", NULL, &out), MCPAXLE_OK);
        CHECK_JSON(out, "/content/0/text", "accept decline legacy-model file:///legacy accept");
        CHECK(atomic_load(&asked) == 5);
        for (int i = 0; i < 6; i++) CHECK_RC(r.codes[i], MCPAXLE_OK);
        mcpaxle_string_free(out), out = NULL;
        mcpaxle_client_free(c);
    }

    /* The client's answer fails: so does the ask, and the tool with it (an isError result). */
    memset(&r, 0, sizeof r);
    c = connect_legacy(port, elicitation_with_bytes);
    if (c) {
        CHECK_RC(mcpaxle_client_call_tool(c, "ask", "{}", NULL, &out), MCPAXLE_OK);
        CHECK_JSON(out, "/isError", "true");
        CHECK_RC(bytes_reply, MCPAXLE_ERR_USAGE);
        CHECK(r.codes[0] != MCPAXLE_OK && r.codes[0] != MCPAXLE_INPUT_REQUIRED);
        CHECK_RC(r.codes[5], MCPAXLE_OK);
        mcpaxle_string_free(out);
        mcpaxle_client_free(c);
    }

    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    RUN(a_null_key_is_the_next_automatic_key);
    RUN(a_null_key_in_a_legacy_session_asks_the_client);
    return summary();
}

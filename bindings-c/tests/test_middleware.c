/*
 * C tests of middleware (mcpaxle_server_use_middleware, mcpaxle_next_run) and the visibility
 * predicate (mcpaxle_server_set_visibility), over raw HTTP with bearer tokens: a rate limit
 * per principal, the order of two audit middlewares, tool-level authorization rejecting with a
 * chosen JSON-RPC code, a result rewrite, the request's headers and claims in the context, and
 * lists filtered per principal with hidden tools answering as unknown ones. (Both eras are
 * covered by the core's tests; the C binding adds no era-specific code.) Run by
 * bindings-c/tests/run.sh under valgrind.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#define AUTH_JSON "{\"resource\":\"http://127.0.0.1/mcp\",\"authorizationServers\":[\"http://127.0.0.1:9/as\"]}"

static void verify(void *ud, const char *token, mcpaxle_reply *c) {
    (void)ud;
    if (strcmp(token, "alice") == 0) {
        mcpaxle_reply_ok(c, "{\"subject\":\"alice\",\"scopes\":[\"mcp\"],\"claims\":{\"tenant\":\"acme\",\"roles\":[\"admin\"]}}");
    } else if (strcmp(token, "bob") == 0) {
        mcpaxle_reply_ok(c, "{\"subject\":\"bob\",\"scopes\":[\"mcp\"],\"claims\":{\"tenant\":\"globex\",\"roles\":[]}}");
    } else {
        mcpaxle_reply_ok(c, "null");
    }
}

/* Answers with what the context knows: the X-Tenant header and the token's tenant claim. */
static void whoami(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *info = NULL, *header = NULL, *tenant = NULL;
    mcpaxle_context_info(ctx, &info);
    mcpaxle_json_get_string(info, "/headers/x-tenant", &header);
    mcpaxle_json_get_string(info, "/claims/tenant", &tenant);
    char *text = fmt("%s %s", header ? header : "(none)", tenant ? tenant : "(none)");
    reply_text(c, text);
    free(text), mcpaxle_string_free(info), mcpaxle_string_free(header), mcpaxle_string_free(tenant);
}

static void named(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args, (void)ctx;
    reply_text(c, ud);
}

static mcpaxle_server *make_server(void) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, AUTH_JSON, verify, NULL), MCPAXLE_OK);
    mcpaxle_server_add_tool(s, "{\"name\":\"whoami\",\"inputSchema\":{\"type\":\"object\"}}", whoami, NULL);
    mcpaxle_server_add_tool(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", named, "echo ran");
    mcpaxle_server_add_tool(s, "{\"name\":\"admin_reset\",\"inputSchema\":{\"type\":\"object\"}}", named, "reset");
    return s;
}

static struct http_response call_as(uint16_t port, const char *token, const char *tool) {
    char *auth = fmt("Authorization: Bearer %s\r\nX-Tenant: %s-corp\r\n", token, token);
    char *params = fmt("\"name\":\"%s\",\"arguments\":{}", tool);
    struct http_response r = mcp_exchange(port, auth, "tools/call", tool, params, NULL, "{}");
    free(auth), free(params);
    return r;
}

/* ---- middleware ------------------------------------------------------------------------------ */

/* What one middleware call keeps until its `next` answers. */
struct pending {
    mcpaxle_reply *reply;
    struct chain *chain;
    const char *tag;
    bool shout;
};

/* The state of a server's middleware: the audit log, call counts per principal. */
struct chain {
    pthread_mutex_t lock;
    char log[2048];
    int calls_alice, calls_bob;
};

static void note(struct chain *ch, const char *line) {
    pthread_mutex_lock(&ch->lock);
    strncat(ch->log, line, sizeof ch->log - strlen(ch->log) - 1);
    strncat(ch->log, ";", sizeof ch->log - strlen(ch->log) - 1);
    pthread_mutex_unlock(&ch->lock);
}

/* `next` answered: pass its outcome on (the error with its code), rewritten when asked. */
static void after_next(void *ud, const char *outcome) {
    struct pending *p = ud;
    char *ok = NULL;
    mcpaxle_json_get(outcome, "/ok", &ok); /* NULL when the outcome is an error */
    if (ok) {
        if (p->tag) {
            char *line = fmt("%s < ok", p->tag);
            note(p->chain, line);
            free(line);
        }
        if (p->shout) {
            mcpaxle_reply_ok(p->reply, "{\"content\":[{\"type\":\"text\",\"text\":\"REWRITTEN\"}],\"_meta\":{\"example.com/rewritten\":true}}");
        } else {
            mcpaxle_reply_ok(p->reply, ok);
        }
    } else {
        char *message = NULL, *code = NULL, *data = NULL;
        mcpaxle_json_get_string(outcome, "/error/message", &message);
        mcpaxle_json_get(outcome, "/error/code", &code);
        mcpaxle_json_get(outcome, "/error/data", &data); /* absent: stays NULL */
        if (p->tag) {
            char *line = fmt("%s < error %s", p->tag, code ? code : "?");
            note(p->chain, line);
            free(line);
        }
        mcpaxle_reply_rpc_error(p->reply, code ? atoi(code) : -32603, message ? message : "?", data);
        mcpaxle_string_free(message), mcpaxle_string_free(code), mcpaxle_string_free(data);
    }
    mcpaxle_string_free(ok);
    free(p);
}

static void pass_on(struct chain *ch, const char *tag, bool shout, mcpaxle_next *next, mcpaxle_reply *reply) {
    struct pending *p = calloc(1, sizeof *p);
    p->reply = reply, p->chain = ch, p->tag = tag, p->shout = shout;
    if (mcpaxle_next_run(next, after_next, p) != MCPAXLE_OK) {
        mcpaxle_reply_error(reply, MCPAXLE_ERR_INTERNAL, mcpaxle_last_error_message());
        free(p);
    }
}

static char *field(const char *json, const char *pointer) {
    char *v = NULL;
    mcpaxle_json_get_string(json, pointer, &v);
    return v;
}

/* Two tool calls per principal. */
static void rate_limit(void *ud, const char *req, mcpaxle_next *next, mcpaxle_reply *reply) {
    struct chain *ch = ud;
    char *method = field(req, "/method"), *who = field(req, "/principal");
    int n = 0;
    if (method && strcmp(method, "tools/call") == 0 && who) {
        pthread_mutex_lock(&ch->lock);
        n = strcmp(who, "alice") == 0 ? ++ch->calls_alice : ++ch->calls_bob;
        pthread_mutex_unlock(&ch->lock);
    }
    if (n > 2) {
        char *message = fmt("Rate limited: %s may make 2 tool calls", who);
        mcpaxle_reply_rpc_error(reply, -32600, message, "{\"retryAfterMs\":1000}");
        free(message);
    } else {
        pass_on(ch, NULL, false, next, reply);
    }
    mcpaxle_string_free(method), mcpaxle_string_free(who);
}

static void audit(struct chain *ch, const char *tag, const char *req, mcpaxle_next *next, mcpaxle_reply *reply) {
    char *name = field(req, "/name"), *era = field(req, "/era"), *who = field(req, "/principal");
    char *line = fmt("%s > %s %s %s", tag, name ? name : "-", era ? era : "?", who ? who : "-");
    note(ch, line);
    free(line), mcpaxle_string_free(name), mcpaxle_string_free(era), mcpaxle_string_free(who);
    pass_on(ch, tag, false, next, reply);
}

static void audit_outer(void *ud, const char *req, mcpaxle_next *next, mcpaxle_reply *reply) {
    audit(ud, "outer", req, next, reply);
}

static void audit_inner(void *ud, const char *req, mcpaxle_next *next, mcpaxle_reply *reply) {
    audit(ud, "inner", req, next, reply);
}

/* admin_* tools need the admin role among the token's claims: -32003 otherwise. */
static void authorize(void *ud, const char *req, mcpaxle_next *next, mcpaxle_reply *reply) {
    char *name = field(req, "/name"), *role = field(req, "/claims/roles/0");
    bool admin = role && strcmp(role, "admin") == 0;
    if (name && strncmp(name, "admin_", 6) == 0 && !admin) {
        char *message = fmt("Forbidden: %s needs the admin role", name);
        mcpaxle_reply_rpc_error(reply, -32003, message, NULL);
        free(message);
    } else {
        pass_on(ud, NULL, name && strcmp(name, "echo") == 0, next, reply);
    }
    mcpaxle_string_free(name), mcpaxle_string_free(role);
}

TEST(a_rate_limit_per_principal) {
    struct chain ch = {.lock = PTHREAD_MUTEX_INITIALIZER};
    mcpaxle_server *s = make_server();
    CHECK_RC(mcpaxle_server_use_middleware(s, rate_limit, &ch), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    for (int i = 0; i < 2; i++) {
        struct http_response r = call_as(port, "alice", "echo");
        CHECK_JSON(r.body, "/result/content/0/text", "echo ran");
        http_response_free(&r);
    }
    struct http_response r = call_as(port, "alice", "echo");
    CHECK(r.status == 400); /* -32600's HTTP status */
    CHECK_JSON(r.body, "/error/code", "-32600");
    CHECK_JSON(r.body, "/error/message", "Rate limited: alice may make 2 tool calls");
    CHECK_JSON(r.body, "/error/data/retryAfterMs", "1000");
    http_response_free(&r);
    r = call_as(port, "bob", "echo");
    CHECK_JSON(r.body, "/result/content/0/text", "echo ran");
    http_response_free(&r);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(two_audit_middlewares_in_order_and_errors_passed_on) {
    struct chain ch = {.lock = PTHREAD_MUTEX_INITIALIZER};
    mcpaxle_server *s = make_server();
    CHECK_RC(mcpaxle_server_use_middleware(s, audit_outer, &ch), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_use_middleware(s, audit_inner, &ch), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    struct http_response r = call_as(port, "bob", "echo");
    CHECK_JSON(r.body, "/result/content/0/text", "echo ran");
    http_response_free(&r);
    r = call_as(port, "bob", "nope");
    CHECK(r.status == 400);
    CHECK_JSON(r.body, "/error/code", "-32602");
    CHECK_JSON(r.body, "/error/message", "Unknown tool: nope");
    http_response_free(&r);
    CHECK_STR(ch.log, "outer > echo modern bob;inner > echo modern bob;inner < ok;outer < ok;"
                      "outer > nope modern bob;inner > nope modern bob;inner < error -32602;outer < error -32602;");
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(authorization_with_a_chosen_code_and_a_result_rewrite) {
    struct chain ch = {.lock = PTHREAD_MUTEX_INITIALIZER};
    mcpaxle_server *s = make_server();
    CHECK_RC(mcpaxle_server_use_middleware(s, authorize, &ch), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    struct http_response r = call_as(port, "alice", "admin_reset");
    CHECK_JSON(r.body, "/result/content/0/text", "reset");
    http_response_free(&r);
    r = call_as(port, "bob", "admin_reset");
    CHECK(r.status == 200); /* an application code */
    CHECK_JSON(r.body, "/error/code", "-32003");
    CHECK_JSON(r.body, "/error/message", "Forbidden: admin_reset needs the admin role");
    http_response_free(&r);
    r = call_as(port, "bob", "echo");
    CHECK_JSON(r.body, "/result/content/0/text", "REWRITTEN");
    CHECK_JSON(r.body, "/result/_meta/example.com~1rewritten", "true");
    http_response_free(&r);
    /* The handler's context has the headers and the claims. */
    r = call_as(port, "bob", "whoami");
    CHECK_JSON(r.body, "/result/content/0/text", "bob-corp globex");
    http_response_free(&r);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

static void wrong(void *ud, const char *req, mcpaxle_next *next, mcpaxle_reply *reply) {
    (void)ud, (void)req, (void)next;
    CHECK_RC(mcpaxle_reply_ok(reply, "[1,2]"), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_reply_ok(reply, "{}"), MCPAXLE_ERR_ALREADY_REPLIED);
}

TEST(middleware_completions_checked) {
    mcpaxle_server *s = make_server();
    CHECK_RC(mcpaxle_server_use_middleware(NULL, wrong, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_use_middleware(s, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_next_run(NULL, after_next, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_next_run((mcpaxle_next *)(uintptr_t)999999, after_next, NULL), MCPAXLE_ERR_CLOSED);
    CHECK_RC(mcpaxle_server_use_middleware(s, wrong, NULL), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    struct http_response r = call_as(port, "bob", "echo");
    CHECK_JSON(r.body, "/error/code", "-32603");
    http_response_free(&r);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

/* ---- visibility ------------------------------------------------------------------------------- */

/* admin_* tools are visible to alice only. */
static void admin_only(void *ud, const char *asked, mcpaxle_reply *reply) {
    (void)ud;
    char *who = field(asked, "/request/principal");
    bool admin = who && strcmp(who, "alice") == 0;
    size_t n = 0;
    mcpaxle_json_length(asked, "/items", &n);
    char *out = strdup("[");
    for (size_t i = 0; i < n; i++) {
        char *p = fmt("/items/%zu/name", i), *name = field(asked, p);
        bool seen = admin || !name || strncmp(name, "admin_", 6) != 0;
        char *more = fmt("%s%s%s", out, i ? "," : "", seen ? "true" : "false");
        free(out), free(p), mcpaxle_string_free(name);
        out = more;
    }
    char *done = fmt("%s]", out);
    mcpaxle_reply_ok(reply, done);
    free(out), free(done), mcpaxle_string_free(who);
}

TEST(visibility_per_principal) {
    mcpaxle_server *s = make_server();
    CHECK_RC(mcpaxle_server_set_visibility(NULL, admin_only, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_set_visibility(s, admin_only, NULL), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    struct http_response r = mcp_exchange(port, "Authorization: Bearer bob\r\n", "tools/list", NULL, "", NULL, "{}");
    CHECK_JSON(r.body, "/result/tools/0/name", "echo");
    CHECK_JSON(r.body, "/result/tools/1/name", "whoami");
    CHECK(json_at(r.body, "/result/tools/2") == NULL);
    http_response_free(&r);
    r = mcp_exchange(port, "Authorization: Bearer alice\r\n", "tools/list", NULL, "", NULL, "{}");
    CHECK_JSON(r.body, "/result/tools/0/name", "admin_reset");
    http_response_free(&r);
    r = call_as(port, "bob", "admin_reset");
    CHECK_JSON(r.body, "/error/code", "-32602");
    CHECK_JSON(r.body, "/error/message", "Unknown tool: admin_reset");
    http_response_free(&r);
    r = call_as(port, "alice", "admin_reset");
    CHECK_JSON(r.body, "/result/content/0/text", "reset");
    http_response_free(&r);
    CHECK_RC(mcpaxle_server_set_visibility(s, NULL, NULL), MCPAXLE_OK);
    r = call_as(port, "bob", "admin_reset");
    CHECK_JSON(r.body, "/result/content/0/text", "reset");
    http_response_free(&r);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

int main(int argc, char **argv) {
    (void)argc;
    self_path = argv[0];
    signal(SIGPIPE, SIG_IGN);
    RUN(a_rate_limit_per_principal);
    RUN(two_audit_middlewares_in_order_and_errors_passed_on);
    RUN(authorization_with_a_chosen_code_and_a_result_rewrite);
    RUN(middleware_completions_checked);
    RUN(visibility_per_principal);
    return summary();
}

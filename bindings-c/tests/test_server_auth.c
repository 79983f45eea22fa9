/*
 * C tests of a server protected by OAuth bearer tokens (mcpaxle_server_set_bearer_auth): the
 * protected resource metadata, the 401/403/503 answers, the principal handlers see, every way a
 * token verifier can complete (well or wrongly), and a verification pending while the server
 * is freed. Raw HTTP, so that status codes and challenges are visible. Run by
 * bindings-c/tests/run.sh under valgrind.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#define AUTH_JSON                                                                                    \
    "{\"resource\":\"https://mcp.example.com/mcp\",\"authorizationServers\":[\"https://auth.example.com\"]," \
    "\"requiredScopes\":[\"notes:read\"],\"toolScopes\":{\"write_note\":[\"notes:write\"]}}"

/* ---- the token verifier --------------------------------------------------------------------- */

/* What the verifier saw and what its completions returned, checked by the tests. */
struct verifier {
    atomic_int calls;
    mcpaxle_result codes[8];
    pthread_t thread;
    bool has_thread;
    _Atomic(mcpaxle_reply *) held;
};

static void *complete_later(void *arg) {
    mcpaxle_reply *c = arg;
    sleep_ms(100);
    mcpaxle_reply_ok(c, "{\"subject\":\"alice\",\"scopes\":[\"notes:read\"]}");
    return NULL;
}

/* Fixed tokens: "reader" is alice (notes:read), "writer" bob (notes:read notes:write), "nobody"
 * eve (no scopes), "boom" cannot be checked; the others complete in odd ways; any other token
 * is invalid. */
static void verify(void *ud, const char *token, mcpaxle_reply *c) {
    struct verifier *v = ud;
    atomic_fetch_add(&v->calls, 1);
    if (strcmp(token, "reader") == 0) {
        mcpaxle_reply_ok(c, "{\"subject\":\"alice\",\"scopes\":[\"notes:read\"]}");
    } else if (strcmp(token, "writer") == 0) {
        mcpaxle_reply_ok(c, "{\"subject\":\"bob\",\"scopes\":[\"notes:read\",\"notes:write\"]}");
    } else if (strcmp(token, "nobody") == 0) {
        mcpaxle_reply_ok(c, "{\"subject\":\"eve\"}");
    } else if (strcmp(token, "boom") == 0) {
        v->codes[0] = mcpaxle_reply_error(c, MCPAXLE_ERR_TRANSPORT, "introspection is down");
    } else if (strcmp(token, "twice") == 0) {
        v->codes[1] = mcpaxle_reply_ok(c, "{\"subject\":\"alice\",\"scopes\":[\"notes:read\"]}");
        v->codes[2] = mcpaxle_reply_ok(c, "null");
    } else if (strcmp(token, "malformed") == 0) {
        v->codes[3] = mcpaxle_reply_ok(c, "{\"sub\":\"alice\",\"scope\":\"notes:read\"}");
    } else if (strcmp(token, "not_json") == 0) {
        v->codes[4] = mcpaxle_reply_ok(c, "{nope");
    } else if (strcmp(token, "redirect") == 0) {
        v->codes[5] = mcpaxle_reply_redirect(c, "http://127.0.0.1/callback?code=x");
    } else if (strcmp(token, "input") == 0) {
        v->codes[6] = mcpaxle_reply_input_required(c);
    } else if (strcmp(token, "later") == 0) {
        v->has_thread = pthread_create(&v->thread, NULL, complete_later, c) == 0;
    } else if (strcmp(token, "hold") == 0) {
        atomic_store(&v->held, c); /* completed by nobody: the server is freed meanwhile */
    } else {
        mcpaxle_reply_ok(c, "null");
    }
}

/* ---- tools ---------------------------------------------------------------------------------- */

/* Answers with the request's principal ("null" when there is none). */
static void whoami(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *info = NULL, *who = NULL;
    mcpaxle_context_info(ctx, &info);
    mcpaxle_json_get_string(info, "/principal", &who); /* NULL for a null principal */
    if (!who) mcpaxle_json_get(info, "/principal", &who); /* "null", or NULL when missing */
    reply_text(c, who ? who : "(missing)");
    mcpaxle_string_free(info), mcpaxle_string_free(who);
}

static void write_note(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    mcpaxle_reply_ok(c, "{\"content\":[{\"type\":\"text\",\"text\":\"written\"}]}");
}

static mcpaxle_server *notes_server(void) {
    mcpaxle_server *s = new_server(NULL);
    mcpaxle_server_add_tool(s, "{\"name\":\"whoami\",\"inputSchema\":{\"type\":\"object\"}}", whoami, NULL);
    mcpaxle_server_add_tool(s, "{\"name\":\"write_note\",\"inputSchema\":{\"type\":\"object\"}}", write_note, NULL);
    return s;
}

/* A tools/call of `tool`, with `Authorization: Bearer <token>` unless `token` is NULL. */
static struct http_response call_as(uint16_t port, const char *token, const char *tool) {
    char *auth = token ? fmt("Authorization: Bearer %s\r\n", token) : strdup("");
    char *params = fmt("\"name\":\"%s\",\"arguments\":{}", tool);
    struct http_response r = mcp_exchange(port, auth, "tools/call", tool, params, NULL, "{}");
    free(auth), free(params);
    return r;
}

/* The value of `header` in `r` contains `part` (or, with `want` false, does not). */
static bool header_has(const struct http_response *r, const char *header, const char *part, bool want) {
    char *v = http_header(r, header);
    bool has = v && strstr(v, part) != NULL;
    if (has != want) fprintf(stderr, "  %s: %s %s %s\n", header, v ? v : "(missing)", want ? "lacks" : "has", part);
    free(v);
    return has == want;
}

/* ---- tests ---------------------------------------------------------------------------------- */

TEST(bearer_auth_with_bad_arguments) {
    struct verifier v = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_set_bearer_auth(NULL, AUTH_JSON, verify, &v), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, NULL, verify, &v), MCPAXLE_ERR_NULL);
    /* A verify callback, or the built-in verifiers (jwt / introspection): one or the other. */
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, AUTH_JSON, NULL, &v), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "needs a verify callback, or the jwt or introspection option") != NULL);
    const char *with_jwt = "{\"resource\":\"https://mcp.example.com/mcp\",\"authorizationServers\":[\"https://auth.example.com\"],\"jwt\":{}}";
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, with_jwt, verify, &v), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "not both") != NULL);
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, "{\"resource\":", verify, &v), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, "\xff", verify, &v), MCPAXLE_ERR_INVALID_UTF8);
    /* No authorization servers; a misspelt member; a scope list that is a string. */
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, "{\"resource\":\"https://mcp.example.com/mcp\"}", verify, &v),
             MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, "{\"resource\":\"https://x/mcp\",\"authorizationServers\":[],\"requiredScope\":[]}", verify, &v),
             MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, "{\"resource\":\"https://x/mcp\",\"authorizationServers\":[],\"requiredScopes\":\"a b\"}", verify, &v),
             MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "auth_json") != NULL);
    /* Nothing failed half-way: the server still serves without protection. */
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    struct http_response r = http_request(port, "GET", "/.well-known/oauth-protected-resource/mcp", "", NULL);
    CHECK(r.status == 404);
    http_response_free(&r);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
    CHECK(atomic_load(&v.calls) == 0);
}

TEST(bearer_auth_protects_the_endpoint) {
    struct verifier v = {0};
    mcpaxle_server *s = notes_server();
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, AUTH_JSON, verify, &v), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    /* The metadata is public. */
    struct http_response r = http_request(port, "GET", "/.well-known/oauth-protected-resource/mcp", "", NULL);
    CHECK(r.status == 200);
    CHECK_JSON(r.body, "/resource", "https://mcp.example.com/mcp");
    CHECK_JSON(r.body, "/authorization_servers", "[\"https://auth.example.com\"]");
    CHECK_JSON(r.body, "/scopes_supported", "[\"notes:read\"]");
    http_response_free(&r);

    /* No token: 401 with the challenge that starts a client's flow, no error details. */
    r = call_as(port, NULL, "whoami");
    CHECK(r.status == 401);
    CHECK(header_has(&r, "www-authenticate", "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\"", true));
    CHECK(header_has(&r, "www-authenticate", "scope=\"notes:read\"", true));
    CHECK(header_has(&r, "www-authenticate", "error=", false));
    http_response_free(&r);
    CHECK(atomic_load(&v.calls) == 0);

    /* A token the verifier rejects. */
    r = call_as(port, "forged", "whoami");
    CHECK(r.status == 401);
    CHECK(header_has(&r, "www-authenticate", "error=\"invalid_token\"", true));
    CHECK(header_has(&r, "www-authenticate", "resource_metadata=", true));
    CHECK_JSON(r.body, "/error", "invalid_token");
    http_response_free(&r);

    /* A verifier that cannot decide: 503. */
    r = call_as(port, "boom", "whoami");
    CHECK(r.status == 503);
    CHECK_JSON(r.body, "/error", "temporarily_unavailable");
    CHECK_RC(v.codes[0], MCPAXLE_OK);
    http_response_free(&r);

    /* A valid token: its subject is the principal. */
    r = call_as(port, "reader", "whoami");
    CHECK(r.status == 200);
    CHECK_JSON(r.body, "/result/content/0/text", "alice");
    http_response_free(&r);

    /* Without the scopes every request needs: 403. */
    r = call_as(port, "nobody", "whoami");
    CHECK(r.status == 403);
    CHECK(header_has(&r, "www-authenticate", "error=\"insufficient_scope\"", true));
    http_response_free(&r);

    /* A tool that needs more: 403 naming every scope needed (step-up). */
    r = call_as(port, "reader", "write_note");
    CHECK(r.status == 403);
    CHECK(header_has(&r, "www-authenticate", "error=\"insufficient_scope\", scope=\"notes:read notes:write\"", true));
    CHECK_JSON(r.body, "/error", "insufficient_scope");
    http_response_free(&r);
    r = call_as(port, "writer", "write_note");
    CHECK(r.status == 200);
    CHECK_JSON(r.body, "/result/content/0/text", "written");
    http_response_free(&r);
    r = call_as(port, "writer", "whoami");
    CHECK_JSON(r.body, "/result/content/0/text", "bob");
    http_response_free(&r);

    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
    CHECK(atomic_load(&v.calls) == 7);
}

TEST(token_verifier_completions) {
    struct verifier v = {0};
    mcpaxle_server *s = notes_server();
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, AUTH_JSON, verify, &v), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    /* The first completion wins. */
    struct http_response r = call_as(port, "twice", "whoami");
    CHECK_JSON(r.body, "/result/content/0/text", "alice");
    CHECK_RC(v.codes[1], MCPAXLE_OK);
    CHECK_RC(v.codes[2], MCPAXLE_ERR_ALREADY_REPLIED);
    http_response_free(&r);

    /* From another thread, after the callback returned. */
    r = call_as(port, "later", "whoami");
    CHECK_JSON(r.body, "/result/content/0/text", "alice");
    http_response_free(&r);
    if (v.has_thread) pthread_join(v.thread, NULL);

    /* Wrong answers complete the call (the token cannot be checked: 503) and say why. */
    const char *wrong[] = {"malformed", "not_json", "redirect", "input"};
    mcpaxle_result want[] = {MCPAXLE_ERR_USAGE, MCPAXLE_ERR_INVALID_JSON, MCPAXLE_ERR_USAGE, MCPAXLE_ERR_USAGE};
    for (int i = 0; i < 4; i++) {
        r = call_as(port, wrong[i], "whoami");
        CHECK(r.status == 503);
        CHECK_RC(v.codes[3 + i], want[i]);
        http_response_free(&r);
    }

    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

/* Every invalid bearer auth of tests/auth_option_cases.json (shared with the core, Python and
 * Node) is refused with the core's message naming the member at fault. */
TEST(every_shared_bad_bearer_auth_is_refused_at_its_member) {
    char *doc = shared_table("auth_option_cases.json");
    CHECK(doc != NULL);
    if (!doc) return;
    struct verifier v = {0};
    mcpaxle_server *s = new_server(NULL);
    char *valid = json_value(doc, "/bearerAuth/valid");
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, valid, verify, &v), MCPAXLE_OK);
    size_t n = json_count(doc, "/bearerAuth/cases");
    CHECK(n >= 15);
    for (size_t i = 0; i < n; i++) {
        char *at = fmt("/bearerAuth/cases/%zu", i), *p;
        char *name = json_text(doc, (p = fmt("%s/name", at))), *set = (free(p), json_value(doc, (p = fmt("%s/set", at))));
        char *path = (free(p), json_text(doc, (p = fmt("%s/path", at))));
        char *message = (free(p), json_text(doc, (p = fmt("%s/message", at))));
        free(p);
        char *options = overlay(valid, set);
        mcpaxle_result rc = mcpaxle_server_set_bearer_auth(s, options, verify, &v);
        char *got = strdup(mcpaxle_last_error_message());
        if (rc != MCPAXLE_ERR_USAGE || !says(got, path, message) || strncmp(got, "auth_json is not valid: ", 24) != 0) {
            fprintf(stderr, "  %s: %s gave %d %s, expected %s: %s\n", name, options, rc, got, path, message);
            CHECK(false);
        }
        free(at), free(name), free(set), free(path), free(message), free(options), free(got);
    }
    mcpaxle_server_free(s);
    free(valid), free(doc);
    CHECK(atomic_load(&v.calls) == 0);
}

/* The answers of tests/auth_option_cases.json's "tokenInfo", by index (the token). */
struct answers {
    char *json[32];
    mcpaxle_result codes[32];
    char *errors[32];
};

static void verify_with_answer(void *ud, const char *token, mcpaxle_reply *c) {
    struct answers *a = ud;
    size_t i = (size_t)atoi(token);
    a->codes[i] = mcpaxle_reply_ok(c, a->json[i]);
    a->errors[i] = strdup(mcpaxle_last_error_message());
}

/* A verifier answering any bad answer of the shared table gets the request 503, and
 * mcpaxle_reply_ok says what is wrong with it, as the core's rule does. */
TEST(every_shared_bad_token_answer_gets_503) {
    char *doc = shared_table("auth_option_cases.json");
    CHECK(doc != NULL);
    if (!doc) return;
    struct answers a = {0};
    size_t n = json_count(doc, "/tokenInfo/cases");
    CHECK(n >= 5 && n <= 32);
    if (n > 32) n = 32;
    for (size_t i = 0; i < n; i++) {
        char *p = fmt("/tokenInfo/cases/%zu/answer", i);
        a.json[i] = json_value(doc, p);
        free(p);
    }
    mcpaxle_server *s = notes_server();
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, AUTH_JSON, verify_with_answer, &a), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    for (size_t i = 0; i < n; i++) {
        char *token = fmt("%zu", i), *p = fmt("/tokenInfo/cases/%zu/name", i), *name = json_text(doc, p);
        free(p);
        char *message = json_text(doc, (p = fmt("/tokenInfo/cases/%zu/message", i)));
        free(p);
        struct http_response r = call_as(port, token, "whoami");
        if (r.status != 503 || a.codes[i] != MCPAXLE_ERR_USAGE || !says(a.errors[i], "", message)) {
            fprintf(stderr, "  %s: %s got %d, reply %d %s, expected 503 and %s\n", name, a.json[i], r.status, a.codes[i],
                    a.errors[i] ? a.errors[i] : "(none)", message);
            CHECK(false);
        }
        http_response_free(&r);
        free(token), free(name), free(message);
    }
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
    for (size_t i = 0; i < n; i++) free(a.json[i]), free(a.errors[i]);
    free(doc);
}

TEST(bearer_auth_applies_to_transports_started_afterwards) {
    struct verifier v = {0};
    mcpaxle_server *s = notes_server();
    uint16_t open_port = 0, port = 0;
    mcpaxle_http_server *open_http = start_http(s, &open_port);
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, AUTH_JSON, verify, &v), MCPAXLE_OK);
    mcpaxle_http_server *http = NULL;
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", "{\"path\":\"/notes\"}", &http), MCPAXLE_OK);
    CHECK_RC(mcpaxle_http_server_port(http, &port), MCPAXLE_OK);

    /* The transport started before keeps serving without protection (no principal). */
    struct http_response r = call_as(open_port, NULL, "whoami");
    CHECK(r.status == 200);
    CHECK_JSON(r.body, "/result/content/0/text", "null");
    http_response_free(&r);

    /* The new one is protected, its metadata beside its own path. */
    r = http_request(port, "GET", "/.well-known/oauth-protected-resource/notes", "", NULL);
    CHECK(r.status == 200);
    CHECK_JSON(r.body, "/resource", "https://mcp.example.com/mcp");
    http_response_free(&r);
    r = http_request(port, "POST", "/notes", "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", "{}");
    CHECK(r.status == 401);
    CHECK(header_has(&r, "www-authenticate", "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/notes\"", true));
    http_response_free(&r);

    /* Setting it again replaces it for transports started afterwards. */
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, "{\"resource\":\"https://other.example.com/mcp\",\"authorizationServers\":[\"https://a\"]}", verify, &v),
             MCPAXLE_OK);
    mcpaxle_http_server *third = NULL;
    uint16_t third_port = 0;
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", NULL, &third), MCPAXLE_OK);
    CHECK_RC(mcpaxle_http_server_port(third, &third_port), MCPAXLE_OK);
    r = http_request(third_port, "GET", "/.well-known/oauth-protected-resource/mcp", "", NULL);
    CHECK_JSON(r.body, "/resource", "https://other.example.com/mcp");
    char *scopes = json_at(r.body, "/scopes_supported");
    CHECK(scopes == NULL); /* no required scopes: none published */
    free(scopes);
    http_response_free(&r);
    r = call_as(third_port, "nobody", "write_note"); /* no scopes needed any more */
    CHECK(r.status == 200);
    http_response_free(&r);

    mcpaxle_http_server_free(third);
    mcpaxle_http_server_free(http);
    mcpaxle_http_server_free(open_http);
    mcpaxle_server_free(s);
}

struct pending {
    uint16_t port;
    int status;
};

static void *call_held(void *arg) {
    struct pending *p = arg;
    struct http_response r = call_as(p->port, "hold", "whoami");
    p->status = r.status;
    http_response_free(&r);
    return NULL;
}

TEST(free_abandons_a_pending_verification) {
    struct verifier v = {0};
    mcpaxle_server *s = notes_server();
    CHECK_RC(mcpaxle_server_set_bearer_auth(s, AUTH_JSON, verify, &v), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    struct pending p = {.port = port, .status = -1};
    pthread_t t;
    pthread_create(&t, NULL, call_held, &p);
    for (int i = 0; i < 500 && !atomic_load(&v.held); i++) sleep_ms(10);
    mcpaxle_reply *held = atomic_load(&v.held);
    CHECK(held != NULL);
    int calls = atomic_load(&v.calls);
    /* The request waits on the verifier; freeing the server abandons the verification. */
    mcpaxle_server_free(s);
    pthread_join(t, NULL);
    CHECK(p.status == 503);
    CHECK_RC(mcpaxle_reply_ok(held, "null"), MCPAXLE_ERR_ALREADY_REPLIED);
    mcpaxle_http_server_free(http);
    CHECK(atomic_load(&v.calls) == calls);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    RUN(bearer_auth_with_bad_arguments);
    RUN(bearer_auth_protects_the_endpoint);
    RUN(token_verifier_completions);
    RUN(every_shared_bad_bearer_auth_is_refused_at_its_member);
    RUN(every_shared_bad_token_answer_gets_503);
    RUN(bearer_auth_applies_to_transports_started_afterwards);
    RUN(free_abandons_a_pending_verification);
    return summary();
}

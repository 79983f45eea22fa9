/*
 * C tests of the server side of include/mcpaxle.h: every exported function, with bad input
 * (NULL everywhere, invalid JSON, double completion, completion from another thread later,
 * free while serving, fork). Run by bindings-c/tests/run.sh under valgrind.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#include <sys/wait.h>

/* ---- handlers ----------------------------------------------------------------------------- */

static atomic_int calls_started;

static void echo_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    atomic_fetch_add(&calls_started, 1);
    reply_text(c, args);
}

/* Records what every context and completion function returned, checked by the test. */
struct record {
    mcpaxle_result codes[32];
    bool flags[8];
    char *texts[4];
    pthread_t thread;
    bool has_thread;
};

static void record_free(struct record *r) {
    for (int i = 0; i < 4; i++) mcpaxle_string_free(r->texts[i]);
    memset(r, 0, sizeof *r);
}

/* Completes twice: the second completion must say MCPAXLE_ERR_ALREADY_REPLIED. */
static void double_completion(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args, (void)ctx;
    struct record *r = ud;
    r->codes[0] = mcpaxle_reply_ok(c, "{\"content\":[{\"type\":\"text\",\"text\":\"first\"}]}");
    r->codes[1] = mcpaxle_reply_ok(c, "{\"content\":[{\"type\":\"text\",\"text\":\"second\"}]}");
    r->codes[2] = mcpaxle_reply_error(c, MCPAXLE_ERR_TOOL, "third");
    r->codes[3] = mcpaxle_reply_input_required(c);
    r->codes[4] = mcpaxle_reply_propagate(c, MCPAXLE_ERR_INTERNAL);
    r->codes[5] = mcpaxle_reply_error_data(c, MCPAXLE_ERR_TOOL, "x", "{}");
    /* The context is over once the call is completed. */
    r->codes[6] = mcpaxle_context_progress(ctx, 1, 2, NULL);
    r->flags[0] = mcpaxle_context_is_cancelled(ctx);
}

struct later {
    mcpaxle_context *ctx;
    mcpaxle_reply *c;
    struct record *r;
};

static void *complete_later(void *arg) {
    struct later *l = arg;
    sleep_ms(100);
    l->r->flags[0] = mcpaxle_context_is_cancelled(l->ctx);
    l->r->codes[0] = mcpaxle_context_progress(l->ctx, 50, 100, "half way, from another thread");
    l->r->codes[1] = mcpaxle_reply_ok(l->c, "{\"content\":[{\"type\":\"text\",\"text\":\"done later\"}]}");
    l->r->codes[2] = mcpaxle_reply_ok(l->c, "{\"content\":[{\"type\":\"text\",\"text\":\"twice\"}]}");
    l->r->flags[1] = mcpaxle_context_is_cancelled(l->ctx);
    free(l);
    return NULL;
}

/* Records whether a function that waits for the runtime may run here (it may not on the
 * runtime's worker: an inline handler), then answers. */
static int where_calls;
static void where_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args, (void)ctx;
    struct record *r = ud;
    mcpaxle_http_server *h = NULL;
    mcpaxle_server *probe = NULL;
    mcpaxle_server_new("probe", "1", NULL, &probe);
    r->codes[where_calls++] = mcpaxle_http_server_start(probe, "127.0.0.1:0", NULL, &h);
    mcpaxle_http_server_free(h);
    mcpaxle_server_free(probe);
    reply_text(c, "here");
}

/* Returns at once; another thread completes the call 100 ms later. */
static void later_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args;
    struct record *r = ud;
    struct later *l = malloc(sizeof *l);
    *l = (struct later){ctx, c, r};
    r->has_thread = pthread_create(&r->thread, NULL, complete_later, l) == 0;
}

/* Completes according to the "mode" argument. */
static void modes_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    struct record *r = ud;
    char *mode = NULL;
    mcpaxle_json_get_string(args, "/mode", &mode);
    if (!mode) {
        mcpaxle_reply_error(c, MCPAXLE_ERR_INVALID_PARAMS, "no mode");
    } else if (strcmp(mode, "tool_error") == 0) {
        r->codes[0] = mcpaxle_reply_error(c, MCPAXLE_ERR_TOOL, "it broke");
    } else if (strcmp(mode, "invalid_params") == 0) {
        r->codes[0] = mcpaxle_reply_error_data(c, MCPAXLE_ERR_INVALID_PARAMS, "bad thing", "{\"why\":42}");
    } else if (strcmp(mode, "bad_json") == 0) {
        r->codes[0] = mcpaxle_reply_ok(c, "{not json");
    } else if (strcmp(mode, "bad_shape") == 0) {
        r->codes[0] = mcpaxle_reply_ok(c, "{\"content\":[],\"isError\":\"not a boolean\"}");
    } else if (strcmp(mode, "null_result") == 0) {
        r->codes[0] = mcpaxle_reply_ok(c, NULL);
    } else if (strcmp(mode, "bad_kind") == 0) {
        r->codes[0] = mcpaxle_reply_error(c, 12345, NULL);
    } else if (strcmp(mode, "bad_data") == 0) {
        r->codes[0] = mcpaxle_reply_error_data(c, MCPAXLE_ERR_INTERNAL, "m", "{oops");
    } else if (strcmp(mode, "propagate_ok") == 0) {
        r->codes[0] = mcpaxle_reply_propagate(c, MCPAXLE_OK);
    } else if (strcmp(mode, "propagate_code") == 0) {
        r->codes[0] = mcpaxle_reply_propagate(c, MCPAXLE_ERR_METHOD_NOT_FOUND);
    } else if (strcmp(mode, "info") == 0) {
        char *info = NULL;
        r->codes[0] = mcpaxle_context_info(ctx, &info);
        r->texts[0] = info;
        r->codes[1] = mcpaxle_context_log(ctx, MCPAXLE_LOG_INFO, "tests", "{\"hello\":1}");
        r->codes[2] = mcpaxle_context_log(ctx, 99, NULL, "1");
        r->codes[3] = mcpaxle_context_log(ctx, MCPAXLE_LOG_INFO, NULL, "{bad");
        r->flags[0] = mcpaxle_context_log_enabled(ctx, MCPAXLE_LOG_DEBUG);
        r->flags[1] = mcpaxle_context_log_enabled(ctx, MCPAXLE_LOG_ERROR);
        r->flags[2] = mcpaxle_context_log_enabled(ctx, 99);
        r->codes[4] = mcpaxle_context_notify(ctx, "notifications/custom", "{\"x\":1}");
        r->codes[5] = mcpaxle_context_notify(ctx, "notifications/custom", NULL);
        r->codes[6] = mcpaxle_context_notify(ctx, NULL, NULL);
        r->codes[7] = mcpaxle_context_progress(ctx, 1, -1, NULL);
        r->codes[8] = mcpaxle_context_progress(ctx, 2, NAN, "msg");
        r->flags[3] = mcpaxle_context_client_supports(ctx, "sampling");
        r->flags[4] = mcpaxle_context_client_supports(ctx, "elicitation");
        r->flags[5] = mcpaxle_context_client_supports(ctx, NULL);
        r->flags[6] = mcpaxle_context_is_cancelled(ctx);
        r->codes[9] = mcpaxle_context_info(ctx, NULL);
        /* Not a legacy session: closing the stream does nothing, the call completes. */
        r->codes[13] = mcpaxle_context_close_stream(ctx, 100);
        r->codes[14] = mcpaxle_context_close_stream(NULL, 100);
        r->codes[10] = mcpaxle_reply_ok(c, "{\"content\":[{\"type\":\"text\",\"text\":\"info\"}]}");
        r->codes[11] = mcpaxle_context_info(ctx, &info);
        r->codes[12] = mcpaxle_context_request_state(ctx, &info);
        r->codes[15] = mcpaxle_context_close_stream(ctx, 100);
    }
    mcpaxle_string_free(mode);
}

/* MRTR: asks for a name (elicitation), then for roots and a sample, keeping request state. */
static void mrtr_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args;
    struct record *r = ud;
    char *state = NULL, *name = NULL, *sample = NULL, *roots = NULL;
    r->codes[0] = mcpaxle_context_request_state(ctx, &state);
    if (!state) r->codes[1] = mcpaxle_context_set_request_state(ctx, "{\"round\":1}");
    r->codes[2] = mcpaxle_context_set_request_state(ctx, "{broken");
    mcpaxle_result e = mcpaxle_context_elicit(
        ctx, "name", "{\"mode\":\"form\",\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}", &name);
    mcpaxle_result s = mcpaxle_context_sample(
        ctx, "sample", "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],\"maxTokens\":5}", &sample);
    mcpaxle_result l = mcpaxle_context_list_roots(ctx, "roots", &roots);
    r->codes[3] = e, r->codes[4] = s, r->codes[5] = l;
    /* Bad input to the asks. */
    r->codes[6] = mcpaxle_context_elicit(ctx, "k", NULL, &r->texts[3]);
    r->codes[7] = mcpaxle_context_elicit(ctx, "k", "{bad", &r->texts[3]);
    r->codes[8] = mcpaxle_context_sample(ctx, "k", "{}", NULL);
    r->codes[9] = mcpaxle_context_list_roots(NULL, "k", &r->texts[3]);
    mcpaxle_result first = e != MCPAXLE_OK ? e : s != MCPAXLE_OK ? s : l;
    if (first != MCPAXLE_OK) {
        r->codes[10] = mcpaxle_reply_propagate(c, first);
    } else {
        char *who = NULL;
        mcpaxle_json_get_string(name, "/content/name", &who);
        char *text = fmt("name=%s state=%s", who ? who : "?", state ? state : "none");
        r->codes[10] = reply_text(c, text);
        free(text), mcpaxle_string_free(who);
    }
    mcpaxle_string_free(state), mcpaxle_string_free(name), mcpaxle_string_free(sample), mcpaxle_string_free(roots);
}

/* Needs sampling: fails with -32021 (and its data) through mcpaxle_reply_propagate. */
static void needs_sampling(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args;
    struct record *r = ud;
    char *answer = NULL;
    r->codes[0] = mcpaxle_context_sample(ctx, "s", "{\"messages\":[],\"maxTokens\":1}", &answer);
    r->codes[1] = mcpaxle_reply_propagate(c, r->codes[0]);
    mcpaxle_string_free(answer);
}

static void read_resource(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *uri = NULL, *id = NULL;
    mcpaxle_json_get(req, "/uri", &uri);
    mcpaxle_json_get_string(req, "/variables/id", &id);
    char *json = fmt("{\"contents\":[{\"uri\":%s,\"mimeType\":\"text/plain\",\"text\":\"id=%s\"}]}", uri, id ? id : "none");
    mcpaxle_reply_ok(c, json);
    free(json), mcpaxle_string_free(uri), mcpaxle_string_free(id);
}

static void get_prompt(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *who = NULL;
    mcpaxle_json_get(args, "/who", &who);
    char *json = fmt("{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":%s}}]}", who ? who : "\"nobody\"");
    mcpaxle_reply_ok(c, json);
    free(json), mcpaxle_string_free(who);
}

static void complete_values(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *typed = NULL;
    mcpaxle_json_get(req, "/value", &typed);
    char *json = fmt("{\"completion\":{\"values\":[%s,\"fixed\"]}}", typed ? typed : "\"?\"");
    mcpaxle_reply_ok(c, json);
    free(json), mcpaxle_string_free(typed);
}

/* ---- tests -------------------------------------------------------------------------------- */

TEST(version_names_and_errors) {
    CHECK(strlen(mcpaxle_version()) > 0);
    CHECK_STR(mcpaxle_result_name(MCPAXLE_OK), "MCPAXLE_OK");
    CHECK_STR(mcpaxle_result_name(MCPAXLE_ERR_NULL), "MCPAXLE_ERR_NULL");
    CHECK_STR(mcpaxle_result_name(MCPAXLE_INPUT_REQUIRED), "MCPAXLE_INPUT_REQUIRED");
    CHECK_STR(mcpaxle_result_name(-7), "MCPAXLE_UNKNOWN_RESULT");
    mcpaxle_string_free(NULL);
    char *out = (char *)1, *out2 = NULL;
    CHECK_RC(mcpaxle_json_quote(NULL, &out), MCPAXLE_ERR_NULL);
    CHECK(out == NULL);
    CHECK(strstr(mcpaxle_last_error_message(), "NULL") != NULL);
    /* An error of the C API alone is a usage error, with Internal's code and no data. */
    mcpaxle_error *err = mcpaxle_last_error();
    CHECK_RC(mcpaxle_error_result(err), MCPAXLE_ERR_NULL);
    CHECK_STR(mcpaxle_error_kind(err), "usage");
    CHECK(mcpaxle_error_code(err) == -32603);
    CHECK(mcpaxle_error_data_json(err) == NULL);
    CHECK_RC(mcpaxle_json_quote("x", &out), MCPAXLE_OK);
    CHECK_STR(mcpaxle_last_error_message(), "");
    CHECK(mcpaxle_last_error() == NULL);
    /* The details outlive the call that reset the thread's last error. */
    CHECK(strstr(mcpaxle_error_message(err), "NULL") != NULL);
    mcpaxle_error_free(err);
    mcpaxle_string_free(out);
    /* The message may be the argument of the next call: it is replaced only once that returns. */
    CHECK_RC(mcpaxle_json_get("{bad", "", &out), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_json_quote(mcpaxle_last_error_message(), &out), MCPAXLE_OK);
    CHECK(out && out[0] == '"' && strstr(out, "not valid JSON") != NULL);
    CHECK_RC(mcpaxle_json_get("{bad", "", NULL), MCPAXLE_ERR_NULL);
    err = mcpaxle_last_error();
    CHECK_RC(mcpaxle_json_get("{bad", "", &out2), MCPAXLE_ERR_INVALID_JSON); /* replaces the last error */
    CHECK_RC(mcpaxle_json_get_string(mcpaxle_error_message(err), "", &out2), MCPAXLE_ERR_INVALID_JSON);
    CHECK(strstr(mcpaxle_error_message(err), "out_json is NULL") != NULL);
    mcpaxle_error_free(err);
    mcpaxle_error_free(NULL);
    CHECK_STR(mcpaxle_error_kind(NULL), "");
    CHECK_STR(mcpaxle_error_message(NULL), "");
    CHECK(mcpaxle_error_code(NULL) == 0);
    mcpaxle_string_free(out);
}

TEST(json_helpers) {
    const char *doc = "{\"a\":{\"b\":[1,\"two\",{\"c\":null}]},\"s\":\"h\\u00e9\\\"\"}";
    char *out = NULL;
    size_t n = 99;
    CHECK_RC(mcpaxle_json_get(doc, "/a/b/1", &out), MCPAXLE_OK);
    CHECK_STR(out, "\"two\"");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_get_string(doc, "/a/b/1", &out), MCPAXLE_OK);
    CHECK_STR(out, "two");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_get_string(doc, "/a/b/0", &out), MCPAXLE_OK);
    CHECK_STR(out, "1");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_get_string(doc, "/s", &out), MCPAXLE_OK);
    CHECK_STR(out, "h\xc3\xa9\"");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_get(doc, "/missing", &out), MCPAXLE_OK);
    CHECK(out == NULL);
    CHECK_RC(mcpaxle_json_get(doc, "", &out), MCPAXLE_OK);
    CHECK(out && out[0] == '{');
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_get(doc, "no-slash", &out), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_json_get("{bad", "/a", &out), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_json_get(NULL, "/a", &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_get(doc, NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_get(doc, "/a", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_get_string(doc, "/a", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_get_string("[", "/a", &out), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_json_get_string(doc, "/zz", &out), MCPAXLE_OK);
    CHECK(out == NULL);
    /* A JSON null is no string (never the text "null"); mcpaxle_json_get tells it from absent. */
    out = (char *)1;
    CHECK_RC(mcpaxle_json_get_string(doc, "/a/b/2/c", &out), MCPAXLE_OK);
    CHECK(out == NULL);
    CHECK_RC(mcpaxle_json_get(doc, "/a/b/2/c", &out), MCPAXLE_OK);
    CHECK_STR(out, "null");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_length(doc, "/a/b", &n), MCPAXLE_OK);
    CHECK(n == 3);
    CHECK_RC(mcpaxle_json_length(doc, "/a", &n), MCPAXLE_OK);
    CHECK(n == 1);
    CHECK_RC(mcpaxle_json_length(doc, "/s", &n), MCPAXLE_OK);
    CHECK(n == 3);
    CHECK_RC(mcpaxle_json_length(doc, "/a/b/0", &n), MCPAXLE_OK);
    CHECK(n == 0);
    CHECK_RC(mcpaxle_json_length(doc, "/nope", &n), MCPAXLE_OK);
    CHECK(n == 0);
    CHECK_RC(mcpaxle_json_length(doc, "/a", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_length("{", "/a", &n), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_json_quote("line\n\"q\"", &out), MCPAXLE_OK);
    CHECK_STR(out, "\"line\\n\\\"q\\\"\"");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_keys(doc, "", &out), MCPAXLE_OK);
    CHECK_STR(out, "[\"a\",\"s\"]");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_keys(doc, "/a/b", &out), MCPAXLE_OK);
    CHECK_STR(out, "[]");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_json_keys(doc, "/none", &out), MCPAXLE_OK);
    CHECK(out == NULL);
    CHECK_RC(mcpaxle_json_keys(doc, "", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_keys("nope", "", &out), MCPAXLE_ERR_INVALID_JSON);
    const char *schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"default\":\"Ada\"},"
                         "\"age\":{\"type\":\"integer\",\"default\":36},\"x\":{\"type\":\"string\"}}}";
    CHECK_RC(mcpaxle_elicitation_apply_defaults(schema, "{\"name\":\"Grace\"}", &out), MCPAXLE_OK);
    CHECK_STR(out, "{\"age\":36,\"name\":\"Grace\"}");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_elicitation_apply_defaults(schema, NULL, &out), MCPAXLE_OK);
    CHECK_STR(out, "{\"age\":36,\"name\":\"Ada\"}");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_elicitation_apply_defaults(schema, "[]", &out), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_elicitation_apply_defaults(NULL, NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_elicitation_apply_defaults(schema, "{", &out), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_elicitation_apply_defaults(schema, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_quote("x", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_json_quote("\xff\xfe", &out), MCPAXLE_ERR_INVALID_UTF8);
}

TEST(server_new_and_free) {
    mcpaxle_server *s = (mcpaxle_server *)1;
    CHECK_RC(mcpaxle_server_new(NULL, "1", NULL, &s), MCPAXLE_ERR_NULL);
    CHECK(s == NULL);
    CHECK_RC(mcpaxle_server_new("n", NULL, NULL, &s), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_new("n", "1", NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_new("n", "1", "{not json", &s), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_server_new("n", "1", "{\"tittle\":\"typo\"}", &s), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "tittle") != NULL);
    CHECK_RC(mcpaxle_server_new("n", "1", "{\"enable\":[\"teleport\"]}", &s), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_new("n", "1", "{\"bus\":\"http://127.0.0.1:6379\"}", &s), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "is not a Redis URL") != NULL);
    CHECK_RC(mcpaxle_server_new("\xc3\x28", "1", NULL, &s), MCPAXLE_ERR_INVALID_UTF8);
    CHECK(s == NULL);
    CHECK_RC(mcpaxle_server_new("n", "1",
                                "{\"title\":\"T\",\"instructions\":\"I\",\"pageSize\":2,\"serverInfoInResults\":false,"
                                "\"enable\":[\"tools\",\"resources\",\"prompts\",\"logging\"],\"stateSecret\":\"s3cret-s3cret-s3cret\","
                                "\"stateTtlMs\":60000,\"cache\":{\"tools\":{\"ttlMs\":5,\"cacheScope\":\"private\"},"
                                "\"read\":{\"ttlMs\":1,\"cacheScope\":\"public\"}},"
                                "\"legacy\":{\"enabled\":false,\"maxSessions\":3,\"maxSessionsPerPrincipal\":2,\"maxSessionsPerPeer\":2,"
                                "\"idleTimeoutMs\":1000,\"uninitializedTimeoutMs\":500,\"requestTimeoutMs\":1000}}",
                                &s),
             MCPAXLE_OK);
    CHECK(s != NULL);
    mcpaxle_server_free(s);
    mcpaxle_server_free(NULL);
}

TEST(registrations_with_bad_input) {
    mcpaxle_server *s = new_server(NULL);
    bool removed = true;
    const char *tool = "{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}}";
    CHECK_RC(mcpaxle_server_add_tool(NULL, tool, echo_tool, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, NULL, echo_tool, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, tool, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":", echo_tool, NULL), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"description\":\"no name\"}", echo_tool, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"bad\",\"inputSchema\":{\"type\":\"object\",\"$ref\":\"https://x.invalid/s\"}}", echo_tool, NULL),
             MCPAXLE_ERR_USAGE);
    mcpaxle_error *err = mcpaxle_last_error();
    CHECK_STR(mcpaxle_error_kind(err), "usage");
    CHECK(strstr(mcpaxle_error_message(err), "external references") != NULL);
    mcpaxle_error_free(err);
    CHECK_RC(mcpaxle_server_add_tool(s, tool, echo_tool, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_tool(s, tool, echo_tool, NULL), MCPAXLE_OK); /* replaces */
    CHECK_RC(mcpaxle_server_remove_tool(s, "t", &removed), MCPAXLE_OK);
    CHECK(removed);
    CHECK_RC(mcpaxle_server_remove_tool(s, "t", &removed), MCPAXLE_OK);
    CHECK(!removed);
    CHECK_RC(mcpaxle_server_remove_tool(s, "t", NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_remove_tool(NULL, "t", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_remove_tool(s, NULL, NULL), MCPAXLE_ERR_NULL);

    const char *res = "{\"uri\":\"test://r\",\"name\":\"r\"}";
    /* A hint needs its ttlMs (its cacheScope defaults to private). */
    CHECK_RC(mcpaxle_server_add_resource(s, res, "{\"cacheScope\":\"public\"}", read_resource, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_resource(s, res, "{bad", read_resource, NULL), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_server_add_resource(s, "{\"name\":\"no uri\"}", NULL, read_resource, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_resource(s, res, NULL, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_resource(NULL, res, NULL, read_resource, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_resource(s, res, "{\"ttlMs\":1000,\"cacheScope\":\"public\"}", read_resource, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_remove_resource(s, "test://r", &removed), MCPAXLE_OK);
    CHECK(removed);
    CHECK_RC(mcpaxle_server_remove_resource(s, NULL, &removed), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_remove_resource(NULL, "x", &removed), MCPAXLE_ERR_NULL);

    const char *tpl = "{\"uriTemplate\":\"test://t/{id}\",\"name\":\"t\"}";
    CHECK_RC(mcpaxle_server_add_resource_template(s, "{\"uriTemplate\":\"test://t/{\",\"name\":\"t\"}", NULL, read_resource, NULL),
             MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_resource_template(s, "[]", NULL, read_resource, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_resource_template(s, tpl, NULL, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_resource_template(NULL, tpl, NULL, read_resource, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_resource_template(s, tpl, NULL, read_resource, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_remove_resource_template(s, "test://t/{id}", &removed), MCPAXLE_OK);
    CHECK(removed);
    CHECK_RC(mcpaxle_server_remove_resource_template(s, "test://t/{id}", &removed), MCPAXLE_OK);
    CHECK(!removed);
    CHECK_RC(mcpaxle_server_remove_resource_template(NULL, "x", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_remove_resource_template(s, NULL, NULL), MCPAXLE_ERR_NULL);

    CHECK_RC(mcpaxle_server_add_prompt(s, "{\"description\":\"no name\"}", get_prompt, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_prompt(s, "{", get_prompt, NULL), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\"}", NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_prompt(NULL, "{\"name\":\"p\"}", get_prompt, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\"}", get_prompt, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_remove_prompt(s, "p", &removed), MCPAXLE_OK);
    CHECK(removed);
    CHECK_RC(mcpaxle_server_remove_prompt(s, NULL, &removed), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_remove_prompt(NULL, "p", &removed), MCPAXLE_ERR_NULL);

    CHECK_RC(mcpaxle_server_set_completion(s, "{\"type\":\"ref/other\"}", complete_values, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_set_completion(s, "{\"type\":\"ref/prompt\"}", complete_values, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_set_completion(s, "nope", complete_values, NULL), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_server_set_completion(s, "{\"type\":\"ref/prompt\",\"name\":\"p\"}", NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_set_completion(NULL, "{\"type\":\"ref/prompt\",\"name\":\"p\"}", complete_values, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_set_completion(s, "{\"type\":\"ref/resource\",\"uri\":\"test://t/{id}\"}", complete_values, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_remove_completion(s, "{\"type\":\"ref/resource\",\"uri\":\"test://t/{id}\"}", &removed), MCPAXLE_OK);
    CHECK(removed);
    CHECK_RC(mcpaxle_server_remove_completion(s, "{\"type\":\"ref/resource\",\"uri\":\"test://t/{id}\"}", &removed), MCPAXLE_OK);
    CHECK(!removed);
    CHECK_RC(mcpaxle_server_remove_completion(s, "{}", &removed), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_remove_completion(NULL, "{}", &removed), MCPAXLE_ERR_NULL);

    CHECK_RC(mcpaxle_server_notify_resource_updated(s, "test://r"), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_notify_resource_updated(s, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_notify_resource_updated(NULL, "x"), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_stop(NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_stop(s), MCPAXLE_OK);
    mcpaxle_server_free(s);
}

TEST(http_round_trips_of_every_kind) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_resource(s, "{\"uri\":\"test://r\",\"name\":\"r\"}", NULL, read_resource, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_resource_template(s, "{\"uriTemplate\":\"test://t/{id}\",\"name\":\"t\"}", "{\"ttlMs\":7,\"cacheScope\":\"public\"}",
                                                  read_resource, NULL),
             MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_resource_template_with(s, "{\"uriTemplate\":\"test://u/{id}\",\"name\":\"u\"}", NULL,
                                                       "{\"allowPathTraversal\":true}", read_resource, NULL),
             MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_resource_template_with(s, "{\"uriTemplate\":\"test://v/{id}\",\"name\":\"v\"}", NULL,
                                                       "{\"allowTraversal\":true}", read_resource, NULL),
             MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\",\"arguments\":[{\"name\":\"who\",\"required\":true}]}", get_prompt, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_set_completion(s, "{\"type\":\"ref/prompt\",\"name\":\"p\"}", complete_values, NULL), MCPAXLE_OK);
    mcpaxle_http_server *http = NULL;
    uint16_t port = 0;
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", NULL, &http), MCPAXLE_OK);
    CHECK_RC(mcpaxle_http_server_port(http, &port), MCPAXLE_OK);
    CHECK(port != 0);

    char *body = mcp(port, "tools/call", "echo", "\"name\":\"echo\",\"arguments\":{\"x\":1}", NULL);
    CHECK_JSON(body, "/result/content/0/text", "{\"x\":1}");
    CHECK_JSON(body, "/result/resultType", "complete");
    free(body);
    body = mcp(port, "resources/read", "test://r", "\"uri\":\"test://r\"", NULL);
    CHECK_JSON(body, "/result/contents/0/text", "id=none");
    free(body);
    body = mcp(port, "resources/read", "test://t/42", "\"uri\":\"test://t/42\"", NULL);
    CHECK_JSON(body, "/result/contents/0/text", "id=42");
    CHECK_JSON(body, "/result/ttlMs", "7");
    free(body);
    /* Path traversal in a variable: refused before the handler runs, unless the template opts out. */
    body = mcp(port, "resources/read", "test://t/..%2Fsecret", "\"uri\":\"test://t/..%2Fsecret\"", NULL);
    CHECK_JSON(body, "/error/code", "-32602");
    free(body);
    body = mcp(port, "resources/read", "test://u/..%2Fsecret", "\"uri\":\"test://u/..%2Fsecret\"", NULL);
    CHECK_JSON(body, "/result/contents/0/text", "id=../secret");
    free(body);
    body = mcp(port, "prompts/get", "p", "\"name\":\"p\",\"arguments\":{\"who\":\"Ada\"}", NULL);
    CHECK_JSON(body, "/result/messages/0/content/text", "Ada");
    free(body);
    body = mcp(port, "completion/complete", NULL,
               "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"who\",\"value\":\"A\"}", NULL);
    CHECK_JSON(body, "/result/completion/values/0", "A");
    CHECK_JSON(body, "/result/completion/values/1", "fixed");
    free(body);
    body = mcp(port, "tools/list", NULL, "", NULL);
    CHECK_JSON(body, "/result/tools/0/name", "echo");
    free(body);

    CHECK_RC(mcpaxle_http_server_port(NULL, &port), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_http_server_port(http, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_http_server_stop(http), MCPAXLE_OK);
    CHECK_RC(mcpaxle_http_server_stop(http), MCPAXLE_OK);
    CHECK_RC(mcpaxle_http_server_stop(NULL), MCPAXLE_ERR_NULL);
    mcpaxle_http_server_free(http);
    mcpaxle_http_server_free(NULL);

    mcpaxle_http_server *h2 = (mcpaxle_http_server *)1;
    CHECK_RC(mcpaxle_http_server_start(s, "not an address", NULL, &h2), MCPAXLE_ERR_USAGE);
    CHECK(h2 == NULL);
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", "{\"bogus\":1}", &h2), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_http_server_start(s, NULL, NULL, &h2), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_http_server_start(NULL, "127.0.0.1:0", NULL, &h2), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", NULL, NULL), MCPAXLE_ERR_NULL);
    /* The same port twice: the second cannot listen. */
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", "{\"path\":\"/other\",\"maxBody\":1000,\"allowedHosts\":[\"localhost\"],"
                                          "\"allowedOrigins\":[\"*\"],\"keepAliveMs\":1000,\"drainTimeoutMs\":500}", &h2),
             MCPAXLE_OK);
    CHECK_RC(mcpaxle_http_server_port(h2, &port), MCPAXLE_OK);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)port);
    mcpaxle_http_server *h3 = NULL;
    CHECK_RC(mcpaxle_http_server_start(s, addr, NULL, &h3), MCPAXLE_ERR_TRANSPORT);
    CHECK(h3 == NULL);
    mcpaxle_http_server_free(h2); /* frees a running server: stops it first */
    mcpaxle_server_free(s);
}

TEST(double_completion_is_an_error_not_ub) {
    struct record r = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"twice\",\"inputSchema\":{\"type\":\"object\"}}", double_completion, &r), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    char *body = mcp(port, "tools/call", "twice", "\"name\":\"twice\"", NULL);
    CHECK_JSON(body, "/result/content/0/text", "first");
    free(body);
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    for (int i = 1; i <= 5; i++) CHECK_RC(r.codes[i], MCPAXLE_ERR_ALREADY_REPLIED);
    CHECK_RC(r.codes[6], MCPAXLE_ERR_CLOSED);
    CHECK(r.flags[0]);
    CHECK_RC(mcpaxle_reply_ok(NULL, "{}"), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_reply_error(NULL, MCPAXLE_ERR_TOOL, "x"), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_reply_error_data(NULL, MCPAXLE_ERR_TOOL, "x", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_reply_input_required(NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_reply_propagate(NULL, MCPAXLE_ERR_TOOL), MCPAXLE_ERR_NULL);
    /* A handle that was never handed out (or long spent) is refused, never dereferenced. */
    CHECK_RC(mcpaxle_reply_ok((mcpaxle_reply *)(uintptr_t)0x7fffffff, "{}"), MCPAXLE_ERR_ALREADY_REPLIED);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(completion_from_another_thread_later) {
    struct record r = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"later\",\"inputSchema\":{\"type\":\"object\"}}", later_tool, &r), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    char *body = mcp(port, "tools/call", "later", "\"name\":\"later\"", "\"progressToken\":\"p1\"");
    CHECK(body && strstr(body, "half way, from another thread") != NULL); /* progress, on the SSE stream */
    CHECK(body && strstr(body, "done later") != NULL);
    free(body);
    if (r.has_thread) pthread_join(r.thread, NULL);
    CHECK(!r.flags[0]);
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    CHECK_RC(r.codes[1], MCPAXLE_OK);
    CHECK_RC(r.codes[2], MCPAXLE_ERR_ALREADY_REPLIED);
    CHECK(r.flags[1]);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(inline_handlers_run_on_the_runtime_worker) {
    struct record r = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"where\",\"inputSchema\":{\"type\":\"object\"}}", where_tool, &r), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    /* On the blocking pool (the default), a callback may wait for the runtime. */
    char *body = mcp(port, "tools/call", "where", "\"name\":\"where\"", NULL);
    CHECK_JSON(body, "/result/content/0/text", "here");
    free(body);
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    /* Inline, the same call answers, and what would wait for the runtime is refused. */
    CHECK_RC(mcpaxle_server_set_inline_handlers(s, true), MCPAXLE_OK);
    body = mcp(port, "tools/call", "where", "\"name\":\"where\"", NULL);
    CHECK_JSON(body, "/result/content/0/text", "here");
    free(body);
    CHECK_RC(r.codes[1], MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_set_inline_handlers(s, false), MCPAXLE_OK);
    body = mcp(port, "tools/call", "where", "\"name\":\"where\"", NULL);
    CHECK_JSON(body, "/result/content/0/text", "here");
    free(body);
    CHECK_RC(r.codes[2], MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_set_inline_handlers(NULL, true), MCPAXLE_ERR_NULL);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(completion_errors_and_bad_payloads) {
    struct record r = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"modes\",\"inputSchema\":{\"type\":\"object\"}}", modes_tool, &r), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    char *body;

    body = mcp(port, "tools/call", "modes", "\"name\":\"modes\",\"arguments\":{\"mode\":\"tool_error\"}", NULL);
    CHECK_JSON(body, "/result/isError", "true");
    CHECK_JSON(body, "/result/content/0/text", "it broke");
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    free(body);

    body = mcp(port, "tools/call", "modes", "\"name\":\"modes\",\"arguments\":{\"mode\":\"invalid_params\"}", NULL);
    CHECK_JSON(body, "/error/code", "-32602");
    CHECK_JSON(body, "/error/data/why", "42");
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    free(body);

    const char *internal[][2] = {{"bad_json", "12"}, {"bad_shape", "33"}, {"null_result", "10"}, {"bad_data", "12"},
                                 {"bad_kind", "33"}, {"propagate_ok", "33"}};
    for (size_t i = 0; i < sizeof internal / sizeof *internal; i++) {
        char *params = fmt("\"name\":\"modes\",\"arguments\":{\"mode\":\"%s\"}", internal[i][0]);
        body = mcp(port, "tools/call", "modes", params, NULL);
        /* The call still ends (never hangs): as a tool error or an internal error. */
        CHECK(body && (strstr(body, "\"isError\":true") || strstr(body, "-32603")));
        CHECK((int)r.codes[0] == atoi(internal[i][1]));
        free(body), free(params);
    }

    body = mcp(port, "tools/call", "modes", "\"name\":\"modes\",\"arguments\":{\"mode\":\"propagate_code\"}", NULL);
    CHECK_JSON(body, "/error/code", "-32601");
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    free(body);

    body = mcp(port, "tools/call", "modes", "\"name\":\"modes\",\"arguments\":{\"mode\":\"info\"}",
               "\"io.modelcontextprotocol/logLevel\":\"info\"");
    CHECK(body && strstr(body, "notifications/message") != NULL);
    CHECK(body && strstr(body, "notifications/custom") != NULL);
    CHECK(body && strstr(body, "\"text\":\"info\"") != NULL);
    free(body);
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    CHECK(r.texts[0] && strstr(r.texts[0], "\"method\":\"tools/call\"") != NULL);
    CHECK(r.texts[0] && strstr(r.texts[0], "\"protocolVersion\":\"2026-07-28\"") != NULL);
    CHECK_RC(r.codes[1], MCPAXLE_OK);
    CHECK_RC(r.codes[2], MCPAXLE_ERR_USAGE);
    CHECK_RC(r.codes[3], MCPAXLE_ERR_INVALID_JSON);
    CHECK(!r.flags[0]);
    CHECK(r.flags[1]);
    CHECK(!r.flags[2]);
    CHECK_RC(r.codes[4], MCPAXLE_OK);
    CHECK_RC(r.codes[5], MCPAXLE_OK);
    CHECK_RC(r.codes[6], MCPAXLE_ERR_NULL);
    CHECK_RC(r.codes[7], MCPAXLE_OK);
    CHECK_RC(r.codes[8], MCPAXLE_OK);
    CHECK(r.flags[3]);
    CHECK(r.flags[4]);
    CHECK(!r.flags[5]);
    CHECK(!r.flags[6]);
    CHECK_RC(r.codes[9], MCPAXLE_ERR_NULL);
    CHECK_RC(r.codes[10], MCPAXLE_OK);
    CHECK_RC(r.codes[11], MCPAXLE_ERR_CLOSED);
    CHECK_RC(r.codes[12], MCPAXLE_ERR_CLOSED);
    CHECK_RC(r.codes[13], MCPAXLE_OK);
    CHECK_RC(r.codes[14], MCPAXLE_ERR_NULL);
    CHECK_RC(r.codes[15], MCPAXLE_ERR_CLOSED);
    record_free(&r);

    /* Context functions with a NULL context. */
    char *out = NULL;
    CHECK_RC(mcpaxle_context_elicit(NULL, "k", "{}", &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_context_sample(NULL, "k", "{}", &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_context_progress(NULL, 1, 1, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_context_log(NULL, MCPAXLE_LOG_INFO, NULL, "1"), MCPAXLE_ERR_NULL);
    CHECK(!mcpaxle_context_log_enabled(NULL, MCPAXLE_LOG_INFO));
    CHECK_RC(mcpaxle_context_notify(NULL, "m", NULL), MCPAXLE_ERR_NULL);
    CHECK(mcpaxle_context_is_cancelled(NULL));
    CHECK(!mcpaxle_context_client_supports(NULL, "sampling"));
    CHECK_RC(mcpaxle_context_info(NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_context_request_state(NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_context_set_request_state(NULL, "1"), MCPAXLE_ERR_NULL);
    CHECK(out == NULL);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(mrtr_rounds_and_missing_capability) {
    struct record r = {0};
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\"}}", mrtr_tool, &r), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"needs_sampling\",\"inputSchema\":{\"type\":\"object\"}}", needs_sampling, &r),
             MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    char *body = mcp(port, "tools/call", "ask", "\"name\":\"ask\"", NULL);
    CHECK_JSON(body, "/result/resultType", "input_required");
    CHECK_JSON(body, "/result/inputRequests/name/method", "elicitation/create");
    CHECK_JSON(body, "/result/inputRequests/sample/method", "sampling/createMessage");
    CHECK_JSON(body, "/result/inputRequests/roots/method", "roots/list");
    CHECK_RC(r.codes[0], MCPAXLE_OK);
    CHECK_RC(r.codes[1], MCPAXLE_OK);
    CHECK_RC(r.codes[2], MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(r.codes[3], MCPAXLE_INPUT_REQUIRED);
    CHECK_RC(r.codes[4], MCPAXLE_INPUT_REQUIRED);
    CHECK_RC(r.codes[5], MCPAXLE_INPUT_REQUIRED);
    CHECK_RC(r.codes[6], MCPAXLE_ERR_NULL);
    CHECK_RC(r.codes[7], MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(r.codes[8], MCPAXLE_ERR_NULL);
    CHECK_RC(r.codes[9], MCPAXLE_ERR_NULL);
    CHECK_RC(r.codes[10], MCPAXLE_OK);
    char *state = NULL;
    mcpaxle_json_get(body, "/result/requestState", &state);
    CHECK(state != NULL);
    free(body);
    record_free(&r);

    char *retry = fmt("\"name\":\"ask\",\"requestState\":%s,\"inputResponses\":{"
                      "\"name\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}},"
                      "\"sample\":{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"hi\"},\"model\":\"m\"},"
                      "\"roots\":{\"roots\":[{\"uri\":\"file:///tmp\"}]}}",
                      state ? state : "\"\"");
    body = mcp(port, "tools/call", "ask", retry, NULL);
    CHECK_JSON(body, "/result/content/0/text", "name=Ada state={\"round\":1}");
    CHECK_RC(r.codes[3], MCPAXLE_OK);
    CHECK_RC(r.codes[4], MCPAXLE_OK);
    CHECK_RC(r.codes[5], MCPAXLE_OK);
    free(body), free(retry), mcpaxle_string_free(state);
    record_free(&r);

    /* A malformed answer is an invalid-params error of the ask, propagated as -32602. */
    body = mcp(port, "tools/call", "ask", "\"name\":\"ask\",\"inputResponses\":{\"name\":{\"action\":\"maybe\"}}", NULL);
    CHECK_JSON(body, "/error/code", "-32602");
    CHECK_RC(r.codes[3], MCPAXLE_ERR_INVALID_PARAMS);
    free(body);
    record_free(&r);

    body = mcp_caps(port, "tools/call", "needs_sampling", "\"name\":\"needs_sampling\"", "{}");
    CHECK_JSON(body, "/error/code", "-32021");
    CHECK_JSON(body, "/error/data/requiredCapabilities/sampling", "{}");
    CHECK_RC(r.codes[0], MCPAXLE_ERR_MISSING_CAPABILITY);
    CHECK_RC(r.codes[1], MCPAXLE_OK);
    free(body);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

struct serve_args {
    mcpaxle_server *server;
    char addr[64];
    mcpaxle_result rc;
    int in_fd, out_fd;
};

static void *serve_http_thread(void *arg) {
    struct serve_args *a = arg;
    a->rc = mcpaxle_server_serve_http(a->server, a->addr, NULL);
    return NULL;
}

TEST(blocking_serve_http_stops) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL), MCPAXLE_OK);
    uint16_t port = free_port();
    struct serve_args a = {.server = s, .rc = -1};
    snprintf(a.addr, sizeof a.addr, "127.0.0.1:%u", (unsigned)port);
    pthread_t t;
    pthread_create(&t, NULL, serve_http_thread, &a);
    CHECK(wait_for_port(port));
    char *body = mcp(port, "tools/call", "echo", "\"name\":\"echo\",\"arguments\":{}", NULL);
    CHECK_JSON(body, "/result/content/0/text", "{}");
    free(body);
    CHECK_RC(mcpaxle_server_stop(s), MCPAXLE_OK);
    pthread_join(t, NULL);
    CHECK_RC(a.rc, MCPAXLE_OK);
    /* The server can be served again after a stop. */
    a.rc = -1;
    pthread_create(&t, NULL, serve_http_thread, &a);
    CHECK(wait_for_port(port));
    CHECK_RC(mcpaxle_server_stop(s), MCPAXLE_OK);
    pthread_join(t, NULL);
    CHECK_RC(a.rc, MCPAXLE_OK);

    CHECK_RC(mcpaxle_server_serve_http(s, "nowhere", NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_serve_http(s, "127.0.0.1:0", "{\"x\":1}"), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_serve_http(NULL, "127.0.0.1:0", NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_serve_http(s, NULL, NULL), MCPAXLE_ERR_NULL);
    mcpaxle_server_free(s);
}

/* The connection limits of "connections": a bare connect is closed past headerReadTimeoutMs;
 * bad limits are refused, naming the field. */
TEST(http_connection_limits) {
    mcpaxle_server *s = new_server(NULL);
    mcpaxle_http_server *h = NULL;
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", "{\"connections\":{\"maxConnections\":0}}", &h), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "maxConnections must be at least 1") != NULL);
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0", "{\"connections\":{\"idleTimeout\":5}}", &h), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "idleTimeout") != NULL);
    CHECK_RC(mcpaxle_http_server_start(s, "127.0.0.1:0",
                                       "{\"connections\":{\"maxConnections\":50,\"headerReadTimeoutMs\":200,\"bodyReadTimeoutMs\":1000,"
                                       "\"idleTimeoutMs\":1000,\"http2KeepAliveIntervalMs\":0,\"http2KeepAliveTimeoutMs\":1000,"
                                       "\"maxHeaderBytes\":16384,\"http2MaxConcurrentStreams\":10,\"maxBodyBytesInFlight\":1048576}}",
                                       &h),
             MCPAXLE_OK);
    uint16_t port = 0;
    CHECK_RC(mcpaxle_http_server_port(h, &port), MCPAXLE_OK);
    int fd = connect_port(port);
    CHECK(fd >= 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char byte;
    CHECK(recv(fd, &byte, 1, 0) == 0); /* closed by the server, not by the 5 s timeout */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    CHECK(ms >= 150 && ms < 4000);
    close(fd);
    mcpaxle_http_server_free(h);
    mcpaxle_server_free(s);
}

static void *serve_fds_thread(void *arg) {
    struct serve_args *a = arg;
    a->rc = mcpaxle_server_serve_fds(a->server, a->in_fd, a->out_fd, "{\"maxMessageSize\":100000,\"drainTimeoutMs\":1000}");
    return NULL;
}

TEST(serve_fds_over_pipes) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL), MCPAXLE_OK);
    int to_server[2], from_server[2];
    CHECK(pipe(to_server) == 0 && pipe(from_server) == 0);
    struct serve_args a = {.server = s, .rc = -1, .in_fd = to_server[0], .out_fd = from_server[1]};
    pthread_t t;
    pthread_create(&t, NULL, serve_fds_thread, &a);
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"via\":\"pipe\"},"
                      "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n";
    CHECK(write(to_server[1], req, strlen(req)) == (ssize_t)strlen(req));
    char *line = read_line_fd(from_server[0]);
    CHECK_JSON(line, "/id", "7");
    CHECK_JSON(line, "/result/content/0/text", "{\"via\":\"pipe\"}");
    free(line);
    close(to_server[1]); /* end of input: the serve call returns */
    pthread_join(t, NULL);
    CHECK_RC(a.rc, MCPAXLE_OK);
    close(to_server[0]), close(from_server[0]), close(from_server[1]);

    CHECK_RC(mcpaxle_server_serve_fds(s, -1, 1, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_serve_fds(NULL, 0, 1, NULL), MCPAXLE_ERR_NULL);
    int devnull = open("/dev/null", O_RDWR);
    CHECK_RC(mcpaxle_server_serve_fds(s, devnull, devnull, NULL), MCPAXLE_ERR_USAGE);
    close(devnull);
    CHECK_RC(mcpaxle_server_serve_stdio(NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_serve_stdio(s, "{\"nope\":true}"), MCPAXLE_ERR_USAGE);
    mcpaxle_server_free(s);
}

/* ---- handler timeouts ------------------------------------------------------------------------ */

/* Never completes: keeps the completion, completed by the test once the call has timed out. */
static mcpaxle_reply *held[2];
static atomic_int held_count;
static void hold_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    int i = atomic_fetch_add(&held_count, 1);
    if (i < 2) held[i] = c;
}

static char *call_over_pipe(int in, int out, const char *id, const char *tool) {
    char *req = fmt("{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n",
                    id, tool);
    CHECK(write(in, req, strlen(req)) == (ssize_t)strlen(req));
    free(req);
    return read_line_fd(out);
}

/* handlerTimeoutMs (server-wide) and a tool's own timeoutMs: the call ends with an isError
 * result naming the tool and the limit; replying later is ALREADY_REPLIED. */
TEST(handler_timeouts) {
    mcpaxle_server *bad = NULL;
    CHECK_RC(mcpaxle_server_new("n", "1", "{\"handlerTimeoutMs\":0}", &bad), MCPAXLE_ERR_USAGE);
    mcpaxle_server *s = new_server("{\"handlerTimeoutMs\":150}");
    const char *own = "{\"name\":\"own\",\"inputSchema\":{\"type\":\"object\"}}";
    CHECK_RC(mcpaxle_server_add_tool_with_options(s, own, "{\"timeoutMs\":0}", hold_tool, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_tool_with_options(s, own, "{\"timeout\":5}", hold_tool, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_server_add_tool_with_options(NULL, own, NULL, hold_tool, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_add_tool_with_options(s, own, "{\"timeoutMs\":100}", hold_tool, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"server\",\"inputSchema\":{\"type\":\"object\"}}", hold_tool, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_tool_with_options(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", NULL, echo_tool, NULL), MCPAXLE_OK);
    int to_server[2], from_server[2];
    CHECK(pipe(to_server) == 0 && pipe(from_server) == 0);
    struct serve_args a = {.server = s, .rc = -1, .in_fd = to_server[0], .out_fd = from_server[1]};
    pthread_t t;
    pthread_create(&t, NULL, serve_fds_thread, &a);

    char *line = call_over_pipe(to_server[1], from_server[0], "t1", "own");
    CHECK_JSON(line, "/id", "t1");
    CHECK_JSON(line, "/result/isError", "true");
    CHECK_JSON(line, "/result/content/0/text",
               "Timeout: the tool \"own\" handler did not finish within 100 ms (its own timeout); the call was abandoned");
    free(line);
    line = call_over_pipe(to_server[1], from_server[0], "t2", "server");
    CHECK_JSON(line, "/result/content/0/text",
               "Timeout: the tool \"server\" handler did not finish within 150 ms (the server's handler timeout); the call was abandoned");
    free(line);
    line = call_over_pipe(to_server[1], from_server[0], "t3", "echo");
    CHECK_JSON(line, "/id", "t3");
    free(line);
    CHECK(atomic_load(&held_count) == 2);
    for (int i = 0; i < 2; i++) CHECK_RC(mcpaxle_reply_ok(held[i], "{\"content\":[]}"), MCPAXLE_ERR_ALREADY_REPLIED);

    close(to_server[1]);
    pthread_join(t, NULL);
    CHECK_RC(a.rc, MCPAXLE_OK);
    close(to_server[0]), close(from_server[0]), close(from_server[1]);
    mcpaxle_server_free(s);
}

/* serve_stdio in a child process (exec'd, so a fresh process): one request, then EOF. */
TEST(serve_stdio_in_a_child) {
    int to_child[2], from_child[2];
    CHECK(pipe(to_child) == 0 && pipe(from_child) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_child[0], 0), dup2(from_child[1], 1);
        close(to_child[1]), close(from_child[0]);
        execl(self_path, self_path, "--stdio-child", (char *)NULL);
        _exit(127);
    }
    close(to_child[0]), close(from_child[1]);
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"via\":\"stdio\"},"
                      "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n";
    CHECK(write(to_child[1], req, strlen(req)) == (ssize_t)strlen(req));
    char *line = read_line_fd(from_child[0]);
    CHECK_JSON(line, "/id", "s1");
    CHECK_JSON(line, "/result/content/0/text", "{\"via\":\"stdio\"}");
    free(line);
    close(to_child[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(from_child[0]);
}

/* ---- free while serving, and no callback after free ---------------------------------------- */

static atomic_int slow_started, slow_finished;
static _Atomic mcpaxle_result slow_completion = -1;

static void slow_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    atomic_fetch_add(&slow_started, 1);
    sleep_ms(400);
    atomic_store(&slow_completion, mcpaxle_reply_ok(c, "{\"content\":[]}"));
    atomic_fetch_add(&slow_finished, 1);
}

struct post_args {
    uint16_t port;
    char *body;
};

static void *post_thread(void *arg) {
    struct post_args *p = arg;
    p->body = mcp(p->port, "tools/call", "slow", "\"name\":\"slow\"", NULL);
    return NULL;
}

TEST(free_while_serving_waits_for_callbacks) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"slow\",\"inputSchema\":{\"type\":\"object\"}}", slow_tool, NULL), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);
    struct post_args p = {port, NULL};
    pthread_t t;
    pthread_create(&t, NULL, post_thread, &p);
    for (int i = 0; i < 200 && atomic_load(&slow_started) == 0; i++) sleep_ms(10);
    CHECK(atomic_load(&slow_started) == 1);
    mcpaxle_server_free(s); /* a callback is running: free waits for it */
    CHECK(atomic_load(&slow_finished) == 1);
    /* Its call was abandoned by the free. */
    CHECK_RC(atomic_load(&slow_completion), MCPAXLE_ERR_ALREADY_REPLIED);
    pthread_join(t, NULL);
    /* The abandoned call's result never reaches the client (it gets an error, or nothing). */
    CHECK(p.body == NULL || strstr(p.body, "\"content\":[]") == NULL);
    free(p.body);
    /* The HTTP server was stopped by the free; a new request gets no callback. */
    char *late = mcp(port, "tools/call", "slow", "\"name\":\"slow\"", NULL);
    free(late);
    CHECK(atomic_load(&slow_started) == 1);
    mcpaxle_http_server_free(http);
}

static void *serve_forever(void *arg) {
    struct serve_args *a = arg;
    a->rc = mcpaxle_server_serve_http(a->server, a->addr, NULL);
    return NULL;
}

TEST(free_stops_a_blocking_serve) {
    mcpaxle_server *s = new_server(NULL);
    uint16_t port = free_port();
    struct serve_args a = {.server = s, .rc = -1};
    snprintf(a.addr, sizeof a.addr, "127.0.0.1:%u", (unsigned)port);
    pthread_t t;
    pthread_create(&t, NULL, serve_forever, &a);
    CHECK(wait_for_port(port));
    mcpaxle_server_free(s);
    pthread_join(t, NULL);
    CHECK_RC(a.rc, MCPAXLE_OK);
}

static void self_freeing_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args, (void)ctx;
    mcpaxle_server **slot = ud;
    mcpaxle_reply_ok(c, "{\"content\":[{\"type\":\"text\",\"text\":\"bye\"}]}");
    mcpaxle_server_free(*slot); /* its own server, from inside its callback: no deadlock */
    *slot = NULL;
}

TEST(free_from_inside_a_callback) {
    static mcpaxle_server *slot;
    slot = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(slot, "{\"name\":\"bye\",\"inputSchema\":{\"type\":\"object\"}}", self_freeing_tool, &slot), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(slot, &port);
    char *body = mcp(port, "tools/call", "bye", "\"name\":\"bye\"", NULL);
    CHECK_JSON(body, "/result/content/0/text", "bye");
    free(body);
    CHECK(slot == NULL);
    mcpaxle_http_server_free(http);
}

TEST(fork_is_refused_in_the_child) {
    mcpaxle_server *s = new_server(NULL); /* the runtime runs in this process */
    int report[2];
    CHECK(pipe(report) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        mcpaxle_server *child = NULL;
        unsigned char failed = 0;
        failed |= (mcpaxle_server_new("c", "1", NULL, &child) != MCPAXLE_ERR_FORK) << 0;
        failed |= (child != NULL) << 1;
        failed |= (mcpaxle_server_add_tool(s, "{\"name\":\"x\"}", echo_tool, NULL) != MCPAXLE_ERR_FORK) << 2;
        failed |= (strstr(mcpaxle_last_error_message(), "fork") == NULL) << 3;
        mcpaxle_http_server *h = NULL;
        failed |= (mcpaxle_http_server_start(s, "127.0.0.1:0", NULL, &h) != MCPAXLE_ERR_FORK) << 4;
        mcpaxle_server_free(s); /* does nothing in the child */
        if (write(report[1], &failed, 1) != 1) failed = 1;
        /* The child holds the parent's runtime memory with none of its threads: end it without
         * running exit-time checks (valgrind would count that memory as leaked in the child). */
        kill(getpid(), SIGKILL);
    }
    close(report[1]);
    unsigned char failed = 0xff;
    CHECK(read(report[0], &failed, 1) == 1);
    close(report[0]);
    if (failed != 0) fprintf(stderr, "  child failed checks (bit mask): %d\n", failed);
    CHECK(failed == 0);
    waitpid(pid, NULL, 0);
    /* The parent is unaffected. */
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"x\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL), MCPAXLE_OK);
    mcpaxle_server_free(s);
}

static int stdio_child(void) {
    mcpaxle_server *s = NULL;
    if (mcpaxle_server_new("child", "1", NULL, &s) != MCPAXLE_OK) return 3;
    if (mcpaxle_server_add_tool(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL) != MCPAXLE_OK) return 4;
    mcpaxle_result r = mcpaxle_server_serve_stdio(s, NULL);
    mcpaxle_server_free(s);
    return r == MCPAXLE_OK ? 0 : 5;
}

int main(int argc, char **argv) {
    self_path = argv[0];
    if (argc == 2 && strcmp(argv[1], "--stdio-child") == 0) return stdio_child();
    signal(SIGPIPE, SIG_IGN);
    RUN(version_names_and_errors);
    RUN(json_helpers);
    RUN(server_new_and_free);
    RUN(registrations_with_bad_input);
    RUN(http_round_trips_of_every_kind);
    RUN(double_completion_is_an_error_not_ub);
    RUN(completion_from_another_thread_later);
    RUN(inline_handlers_run_on_the_runtime_worker);
    RUN(completion_errors_and_bad_payloads);
    RUN(mrtr_rounds_and_missing_capability);
    RUN(blocking_serve_http_stops);
    RUN(http_connection_limits);
    RUN(serve_fds_over_pipes);
    RUN(handler_timeouts);
    RUN(serve_stdio_in_a_child);
    RUN(free_while_serving_waits_for_callbacks);
    RUN(free_stops_a_blocking_serve);
    RUN(free_from_inside_a_callback);
    RUN(fork_is_refused_in_the_child);
    return summary();
}

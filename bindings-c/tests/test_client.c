/*
 * C tests of the client side of include/mcpaxle.h, against a C server in the same process
 * (HTTP) and in a child process (stdio): every client function, blocking and async, the input
 * handlers, subscriptions, call options, cancellation, and bad input. OAuth runs against the
 * Rust fixture fixtures/src/oauth_server.rs (a child process; its path in MCPAXLE_OAUTH_SERVER,
 * which bindings-c/tests/run.sh builds and sets).
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#include <spawn.h>
#include <sys/wait.h>

/* ---- the server under test --------------------------------------------------------------- */

static void echo_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    reply_text(c, args);
}

static void progress_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    for (int i = 1; i <= 3; i++) mcpaxle_context_progress(ctx, i, 3, NULL);
    mcpaxle_context_log(ctx, MCPAXLE_LOG_WARNING, "t", "\"careful\"");
    mcpaxle_reply_ok(c, "{\"content\":[{\"type\":\"text\",\"text\":\"progressed\"}]}");
}

static void slow_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    for (int i = 0; i < 300 && !mcpaxle_context_is_cancelled(ctx); i++) sleep_ms(10);
    mcpaxle_reply_ok(c, "{\"content\":[{\"type\":\"text\",\"text\":\"slow\"}]}");
}

/* Asks the client for all three kinds of input. */
static void asking_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *name = NULL, *sample = NULL, *roots = NULL;
    mcpaxle_result r1 = mcpaxle_context_elicit(ctx, "name",
                                               "{\"mode\":\"form\",\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\","
                                               "\"properties\":{\"name\":{\"type\":\"string\",\"default\":\"Grace\"}}}}",
                                               &name);
    mcpaxle_result r2 = mcpaxle_context_sample(ctx, "s", "{\"messages\":[],\"maxTokens\":1}", &sample);
    mcpaxle_result r3 = mcpaxle_context_list_roots(ctx, "r", &roots);
    mcpaxle_result first = r1 ? r1 : r2 ? r2 : r3;
    if (first) {
        mcpaxle_reply_propagate(c, first);
    } else {
        char *who = NULL, *model = NULL, *root = NULL;
        mcpaxle_json_get_string(name, "/content/name", &who);
        mcpaxle_json_get_string(sample, "/model", &model);
        mcpaxle_json_get_string(roots, "/roots/0/uri", &root);
        char *text = fmt("%s|%s|%s", who, model, root);
        reply_text(c, text);
        free(text), mcpaxle_string_free(who), mcpaxle_string_free(model), mcpaxle_string_free(root);
    }
    mcpaxle_string_free(name), mcpaxle_string_free(sample), mcpaxle_string_free(roots);
}

static void read_res(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *uri = NULL;
    mcpaxle_json_get(req, "/uri", &uri);
    char *json = fmt("{\"contents\":[{\"uri\":%s,\"text\":\"hello\"}]}", uri);
    mcpaxle_reply_ok(c, json);
    free(json), mcpaxle_string_free(uri);
}

static void get_prompt(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *who = NULL;
    mcpaxle_json_get(args, "/who", &who);
    char *json = fmt("{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":%s}}]}", who ? who : "\"?\"");
    mcpaxle_reply_ok(c, json);
    free(json), mcpaxle_string_free(who);
}

static void complete_values(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)req, (void)ctx;
    mcpaxle_reply_ok(c, "{\"completion\":{\"values\":[\"alpha\",\"beta\"]}}");
}

static mcpaxle_server *build_server(void) {
    mcpaxle_server *s = new_server("{\"instructions\":\"test server\"}");
    mcpaxle_server_add_tool(s, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL);
    mcpaxle_server_add_tool(s, "{\"name\":\"progress\",\"inputSchema\":{\"type\":\"object\"}}", progress_tool, NULL);
    mcpaxle_server_add_tool(s, "{\"name\":\"slow\",\"inputSchema\":{\"type\":\"object\"}}", slow_tool, NULL);
    mcpaxle_server_add_tool(s, "{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\"}}", asking_tool, NULL);
    mcpaxle_server_add_resource(s, "{\"uri\":\"test://a\",\"name\":\"a\"}", NULL, read_res, NULL);
    mcpaxle_server_add_resource_template(s, "{\"uriTemplate\":\"test://t/{id}\",\"name\":\"t\"}", NULL, read_res, NULL);
    mcpaxle_server_add_prompt(s, "{\"name\":\"p\",\"arguments\":[{\"name\":\"who\"}]}", get_prompt, NULL);
    mcpaxle_server_set_completion(s, "{\"type\":\"ref/prompt\",\"name\":\"p\"}", complete_values, NULL);
    return s;
}

/* ---- client callbacks -------------------------------------------------------------------- */

static atomic_int elicitations, samplings, roots_asked, logs_seen;

static void on_elicitation(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud;
    atomic_fetch_add(&elicitations, 1);
    char *schema = NULL, *content = NULL;
    mcpaxle_json_get(params, "/requestedSchema", &schema);
    mcpaxle_elicitation_apply_defaults(schema, NULL, &content);
    char *answer = fmt("{\"action\":\"accept\",\"content\":%s}", content);
    mcpaxle_reply_ok(c, answer);
    free(answer), mcpaxle_string_free(schema), mcpaxle_string_free(content);
}

struct later {
    mcpaxle_reply *c;
};

static void *answer_later(void *arg) {
    struct later *l = arg;
    sleep_ms(50);
    mcpaxle_reply_ok(l->c, "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"x\"},\"model\":\"m-later\"}");
    free(l);
    return NULL;
}

static pthread_t sampling_thread;

/* Answers from another thread, later. */
static void on_sampling(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    atomic_fetch_add(&samplings, 1);
    struct later *l = malloc(sizeof *l);
    l->c = c;
    pthread_create(&sampling_thread, NULL, answer_later, l);
}

static void on_roots(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    atomic_fetch_add(&roots_asked, 1);
    mcpaxle_reply_ok(c, "{\"roots\":[{\"uri\":\"file:///work\"}]}");
}

static void on_log(void *ud, const char *params) {
    (void)ud;
    if (strstr(params, "careful")) atomic_fetch_add(&logs_seen, 1);
}

static mcpaxle_client *connect_to(uint16_t port, bool handlers) {
    mcpaxle_client_options *o = NULL;
    mcpaxle_client_options_new("c-client-tests", "1.0", "{\"requestTimeoutMs\":20000,\"logLevel\":\"info\"}", &o);
    if (handlers) {
        mcpaxle_client_options_on_elicitation(o, on_elicitation, NULL);
        mcpaxle_client_options_on_sampling(o, on_sampling, NULL);
        mcpaxle_client_options_on_roots(o, on_roots, NULL);
        mcpaxle_client_options_on_log(o, on_log, NULL);
    }
    char *url = fmt("http://127.0.0.1:%u/mcp", (unsigned)port);
    mcpaxle_client *c = NULL;
    mcpaxle_result r = mcpaxle_client_connect_http(url, o, &c);
    if (r != MCPAXLE_OK) fprintf(stderr, "connect: %s: %s\n", mcpaxle_result_name(r), mcpaxle_last_error_message());
    free(url);
    mcpaxle_client_options_free(o);
    return c;
}

/* ---- tests ------------------------------------------------------------------------------- */

static mcpaxle_server *server;
static mcpaxle_http_server *http;
static uint16_t port;

TEST(options_and_tokens_with_bad_input) {
    mcpaxle_client_options *o = (mcpaxle_client_options *)1;
    CHECK_RC(mcpaxle_client_options_new(NULL, "1", NULL, &o), MCPAXLE_ERR_NULL);
    CHECK(o == NULL);
    CHECK_RC(mcpaxle_client_options_new("n", "1", "{bad", &o), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_client_options_new("n", "1", "{\"retries\":3}", &o), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_options_new("n", "1", "{\"stderr\":\"loud\"}", &o), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_options_new("n", "1",
                                        "{\"protocolVersions\":[\"2026-07-28\"],\"capabilities\":{\"roots\":{}},\"requestTimeoutMs\":1000,"
                                        "\"resetTimeoutOnProgress\":false,\"maxRequestTimeoutMs\":5000,\"probeTimeoutMs\":500,\"cache\":false,"
                                        "\"headers\":{\"X-Test\":\"1\"},\"maxInputRounds\":3,\"logLevel\":\"debug\",\"legacyGetStream\":false,"
                                        "\"maxMessageSize\":100000,\"env\":{\"A\":\"B\"},\"cwd\":\"/\",\"stderr\":\"null\",\"shutdownTimeoutMs\":100}",
                                        NULL),
             MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_options_new("n", "1", NULL, &o), MCPAXLE_OK);
    CHECK_RC(mcpaxle_client_options_on_elicitation(NULL, on_elicitation, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_options_on_sampling(NULL, on_sampling, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_options_on_roots(NULL, on_roots, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_options_on_log(NULL, on_log, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_options_on_elicitation(o, NULL, NULL), MCPAXLE_OK);
    mcpaxle_client_options_free(o);
    mcpaxle_client_options_free(NULL);

    mcpaxle_call_options *co = NULL;
    CHECK_RC(mcpaxle_call_options_new("{\"timeoutMs\":-1}", &co), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_call_options_new("[", &co), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_call_options_new(NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_call_options_new("{\"timeoutMs\":1000,\"meta\":{\"x\":1},\"logLevel\":\"info\",\"bypassCache\":true}", &co), MCPAXLE_OK);
    CHECK_RC(mcpaxle_call_options_set_cancel(NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_call_options_on_progress(NULL, on_log, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_call_options_on_log(NULL, on_log, NULL), MCPAXLE_ERR_NULL);
    mcpaxle_cancel_token *t = NULL;
    CHECK_RC(mcpaxle_cancel_token_new(NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_cancel_token_new(&t), MCPAXLE_OK);
    CHECK(!mcpaxle_cancel_token_is_cancelled(t));
    CHECK_RC(mcpaxle_call_options_set_cancel(co, t), MCPAXLE_OK);
    CHECK_RC(mcpaxle_cancel_token_cancel(t), MCPAXLE_OK);
    CHECK_RC(mcpaxle_cancel_token_cancel(t), MCPAXLE_OK);
    CHECK(mcpaxle_cancel_token_is_cancelled(t));
    CHECK(!mcpaxle_cancel_token_is_cancelled(NULL));
    CHECK_RC(mcpaxle_cancel_token_cancel(NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_call_options_set_cancel(co, NULL), MCPAXLE_OK);
    mcpaxle_cancel_token_free(t);
    mcpaxle_cancel_token_free(NULL);
    mcpaxle_call_options_free(co);
    mcpaxle_call_options_free(NULL);

    mcpaxle_client *c = (mcpaxle_client *)1;
    CHECK_RC(mcpaxle_client_connect_http(NULL, NULL, &c), MCPAXLE_ERR_NULL);
    CHECK(c == NULL);
    CHECK_RC(mcpaxle_client_connect_http("http://127.0.0.1:1/mcp", NULL, &c), MCPAXLE_ERR_TRANSPORT);
    CHECK_RC(mcpaxle_client_connect_http("not a url", NULL, &c), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_connect_stdio(NULL, NULL, NULL, &c), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_connect_stdio("/nonexistent/server", NULL, NULL, &c), MCPAXLE_ERR_TRANSPORT);
    CHECK_RC(mcpaxle_client_connect_stdio("x", "{\"not\":\"an array\"}", NULL, &c), MCPAXLE_ERR_USAGE);
    mcpaxle_client_free(NULL);
}

TEST(blocking_methods) {
    mcpaxle_client *c = connect_to(port, true);
    CHECK(c != NULL);
    if (!c) return;
    char *out = NULL;
    CHECK_RC(mcpaxle_client_info(c, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/era", "modern");
    CHECK_JSON(out, "/protocolVersion", "2026-07-28");
    CHECK_JSON(out, "/instructions", "test server");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_discover(c, NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/supportedVersions/0", "2026-07-28");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_list_tools(c, NULL, NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/tools/0/name", "ask");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_list_resources(c, NULL, NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/resources/0/uri", "test://a");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_list_resource_templates(c, NULL, NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/resourceTemplates/0/uriTemplate", "test://t/{id}");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_list_prompts(c, NULL, NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/prompts/0/name", "p");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_call_tool(c, "echo", "{\"n\":1}", NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/content/0/text", "{\"n\":1}");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_call_tool(c, "echo", NULL, NULL, &out), MCPAXLE_OK);
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_read_resource(c, "test://t/9", NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/contents/0/uri", "test://t/9");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_get_prompt(c, "p", "{\"who\":\"Ada\"}", NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/messages/0/content/text", "Ada");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_complete(c, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"who\",\"value\":\"a\"}}",
                                     NULL, &out),
             MCPAXLE_OK);
    CHECK_JSON(out, "/completion/values/1", "beta");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_request(c, "tools/list", NULL, NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/tools/1/name", "echo");
    mcpaxle_string_free(out);

    /* Errors: a remote JSON-RPC error keeps its code; bad arguments are refused locally. */
    CHECK_RC(mcpaxle_client_call_tool(c, "nope", "{}", NULL, &out), MCPAXLE_ERR_INVALID_PARAMS);
    CHECK(out == NULL);
    mcpaxle_error *err = mcpaxle_last_error();
    CHECK(err != NULL);
    CHECK_STR(mcpaxle_error_kind(err), "invalid_params");
    CHECK(mcpaxle_error_code(err) == -32602);
    CHECK_RC(mcpaxle_error_result(err), MCPAXLE_ERR_INVALID_PARAMS);
    mcpaxle_error_free(err);
    CHECK_RC(mcpaxle_client_read_resource(c, "test://missing", NULL, &out), MCPAXLE_ERR_INVALID_PARAMS);
    CHECK_RC(mcpaxle_client_request(c, "no/such/method", "{}", NULL, &out), MCPAXLE_ERR_METHOD_NOT_FOUND);
    CHECK_RC(mcpaxle_client_request(c, "tools/list", "[1]", NULL, &out), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_call_tool(c, "echo", "[1]", NULL, &out), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_call_tool(c, "echo", "{bad", NULL, &out), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_client_get_prompt(c, "p", "{\"who\":1}", NULL, &out), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_complete(c, "[]", NULL, &out), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_call_tool(NULL, "echo", NULL, NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_call_tool(c, NULL, NULL, NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_call_tool(c, "echo", NULL, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_list_tools(NULL, NULL, NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_info(NULL, &out), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_info(c, NULL), MCPAXLE_ERR_NULL);

    CHECK_RC(mcpaxle_client_set_header(c, "X-Extra", "1"), MCPAXLE_OK);
    CHECK_RC(mcpaxle_client_set_header(c, "X-Extra", NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_client_set_header(c, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_clear_cache(c), MCPAXLE_OK);
    CHECK_RC(mcpaxle_client_clear_cache(NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_close(c), MCPAXLE_OK);
    CHECK(mcpaxle_client_call_tool(c, "echo", NULL, NULL, &out) != MCPAXLE_OK);
    CHECK_RC(mcpaxle_client_close(NULL), MCPAXLE_ERR_NULL);
    mcpaxle_client_free(c);
}

TEST(input_handlers_progress_and_logs) {
    mcpaxle_client *c = connect_to(port, true);
    CHECK(c != NULL);
    if (!c) return;
    char *out = NULL;
    CHECK_RC(mcpaxle_client_call_tool(c, "ask", "{}", NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/content/0/text", "Grace|m-later|file:///work");
    mcpaxle_string_free(out);
    pthread_join(sampling_thread, NULL);
    CHECK(atomic_load(&elicitations) == 1 && atomic_load(&samplings) == 1 && atomic_load(&roots_asked) == 1);

    /* Progress goes to the call's callback, all of it before the call returns; logs to the
     * client's. */
    static atomic_int progress_seen;
    mcpaxle_call_options *co = NULL;
    mcpaxle_call_options_new(NULL, &co);
    void (*count)(void *, const char *) = NULL;
    (void)count;
    CHECK_RC(mcpaxle_call_options_on_progress(co, on_log, NULL), MCPAXLE_OK); /* counts nothing: no "careful" */
    CHECK_RC(mcpaxle_client_call_tool(c, "progress", "{}", co, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/content/0/text", "progressed");
    mcpaxle_string_free(out);
    for (int i = 0; i < 100 && atomic_load(&logs_seen) == 0; i++) sleep_ms(10);
    CHECK(atomic_load(&logs_seen) >= 1);
    (void)progress_seen;
    mcpaxle_call_options_free(co);
    mcpaxle_client_free(c);

    /* Without handlers the client declares no capability: the ask fails with -32021. */
    c = connect_to(port, false);
    CHECK_RC(mcpaxle_client_call_tool(c, "ask", "{}", NULL, &out), MCPAXLE_ERR_MISSING_CAPABILITY);
    /* The error's details are the caller's: reading its data with the JSON helpers (which reset
     * the thread's last error), even failing ones, and freeing the client leave them valid. */
    mcpaxle_error *err = mcpaxle_last_error();
    mcpaxle_client_free(c);
    char *needed = NULL, *bad = NULL;
    CHECK_RC(mcpaxle_json_keys(mcpaxle_error_data_json(err), "/requiredCapabilities", &needed), MCPAXLE_OK);
    CHECK(needed && strstr(needed, "\"roots\"") != NULL); /* the newest failed ask: list_roots */
    CHECK_RC(mcpaxle_json_get("{bad", "", &bad), MCPAXLE_ERR_INVALID_JSON);
    CHECK_STR(mcpaxle_error_kind(err), "missing_required_client_capability");
    CHECK(mcpaxle_error_code(err) == -32021);
    CHECK(strstr(mcpaxle_error_message(err), "requires the client capability roots") != NULL);
    CHECK(strstr(mcpaxle_error_data_json(err), "requiredCapabilities") != NULL);
    mcpaxle_string_free(needed);
    mcpaxle_error_free(err);
}

static atomic_int progress_count;
static void count_progress(void *ud, const char *params) {
    (void)ud;
    if (strstr(params, "\"progress\"")) atomic_fetch_add(&progress_count, 1);
}

struct outcome {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    mcpaxle_result code;
    char *json;
};

static void on_result(void *ud, mcpaxle_result code, const char *json) {
    struct outcome *o = ud;
    pthread_mutex_lock(&o->lock);
    o->calls++;
    o->code = code;
    free(o->json);
    o->json = strdup(json);
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
}

static void wait_outcome(struct outcome *o, int calls) {
    pthread_mutex_lock(&o->lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    while (o->calls < calls)
        if (pthread_cond_timedwait(&o->cond, &o->lock, &until) != 0) break;
    pthread_mutex_unlock(&o->lock);
}

TEST(async_methods_and_cancellation) {
    mcpaxle_client *c = connect_to(port, true);
    CHECK(c != NULL);
    if (!c) return;
    struct outcome o = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, MCPAXLE_OK, NULL};
    int n = 0;
    mcpaxle_call_options *co = NULL;
    mcpaxle_call_options_new(NULL, &co);
    mcpaxle_call_options_on_progress(co, count_progress, NULL);
    CHECK_RC(mcpaxle_client_call_tool_async(c, "progress", "{}", co, &o, on_result), MCPAXLE_OK);
    mcpaxle_call_options_free(co); /* the call copied what it needs */
    wait_outcome(&o, ++n);
    CHECK_RC(o.code, MCPAXLE_OK);
    CHECK_JSON(o.json, "/content/0/text", "progressed");
    CHECK(atomic_load(&progress_count) == 3); /* all progress before the result callback */

    CHECK_RC(mcpaxle_client_discover_async(c, NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/supportedVersions/0", "2026-07-28");
    CHECK_RC(mcpaxle_client_list_tools_async(c, NULL, NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/tools/0/name", "ask");
    CHECK_RC(mcpaxle_client_list_resources_async(c, NULL, NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/resources/0/name", "a");
    CHECK_RC(mcpaxle_client_list_resource_templates_async(c, NULL, NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/resourceTemplates/0/name", "t");
    CHECK_RC(mcpaxle_client_list_prompts_async(c, NULL, NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/prompts/0/name", "p");
    CHECK_RC(mcpaxle_client_read_resource_async(c, "test://a", NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/contents/0/text", "hello");
    CHECK_RC(mcpaxle_client_get_prompt_async(c, "p", NULL, NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/messages/0/content/text", "?");
    CHECK_RC(mcpaxle_client_complete_async(c, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"who\",\"value\":\"\"}}", NULL, &o, on_result),
             MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_JSON(o.json, "/completion/values/0", "alpha");
    CHECK_RC(mcpaxle_client_request_async(c, "no/such", NULL, NULL, &o, on_result), MCPAXLE_OK);
    wait_outcome(&o, ++n);
    CHECK_RC(o.code, MCPAXLE_ERR_METHOD_NOT_FOUND);
    CHECK_JSON(o.json, "/code", "-32601");
    CHECK_RC(mcpaxle_client_call_tool_async(c, "echo", NULL, NULL, &o, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_call_tool_async(c, NULL, NULL, NULL, &o, on_result), MCPAXLE_ERR_NULL);

    /* Cancellation by token: the call ends with MCPAXLE_ERR_CANCELLED, the server is told. */
    mcpaxle_cancel_token *t = NULL;
    mcpaxle_cancel_token_new(&t);
    mcpaxle_call_options_new("{\"timeoutMs\":20000}", &co);
    mcpaxle_call_options_set_cancel(co, t);
    CHECK_RC(mcpaxle_client_call_tool_async(c, "slow", NULL, co, &o, on_result), MCPAXLE_OK);
    sleep_ms(100);
    mcpaxle_cancel_token_cancel(t);
    wait_outcome(&o, ++n);
    CHECK_RC(o.code, MCPAXLE_ERR_CANCELLED);
    if (o.code != MCPAXLE_ERR_CANCELLED) fprintf(stderr, "  outcome: %s\n", o.json);
    mcpaxle_call_options_free(co);
    mcpaxle_cancel_token_free(t);

    /* Freeing the client with a call in flight: its callback runs (cancelled) before free
     * returns. */
    CHECK_RC(mcpaxle_client_call_tool_async(c, "slow", NULL, NULL, &o, on_result), MCPAXLE_OK);
    sleep_ms(50);
    mcpaxle_client_free(c);
    pthread_mutex_lock(&o.lock);
    CHECK(o.calls == n + 1);
    CHECK_RC(o.code, MCPAXLE_ERR_CANCELLED);
    if (o.code != MCPAXLE_ERR_CANCELLED) fprintf(stderr, "  outcome: %s\n", o.json);
    pthread_mutex_unlock(&o.lock);
    free(o.json);
}

struct notes {
    atomic_int count, ended;
};

static void on_note(void *ud, const char *json) {
    struct notes *n = ud;
    if (json == NULL)
        atomic_fetch_add(&n->ended, 1);
    else if (strstr(json, "notifications/tools/list_changed"))
        atomic_fetch_add(&n->count, 1);
}

TEST(subscriptions) {
    mcpaxle_client *c = connect_to(port, false);
    CHECK(c != NULL);
    if (!c) return;
    struct notes n = {0, 0};
    mcpaxle_subscription *sub = NULL;
    CHECK_RC(mcpaxle_client_subscribe(c, "{\"toolsListChanged\":true}", on_note, &n, &sub), MCPAXLE_OK);
    char *ack = NULL;
    CHECK_RC(mcpaxle_subscription_acknowledged(sub, &ack), MCPAXLE_OK);
    CHECK_JSON(ack, "/toolsListChanged", "true");
    mcpaxle_string_free(ack);
    CHECK_RC(mcpaxle_server_add_tool(server, "{\"name\":\"added\",\"inputSchema\":{\"type\":\"object\"}}", echo_tool, NULL), MCPAXLE_OK);
    for (int i = 0; i < 300 && atomic_load(&n.count) == 0; i++) sleep_ms(10);
    CHECK(atomic_load(&n.count) >= 1);
    /* A change announced by name (what changes behind the registries); a name that is not a
     * list is a usage error and sends nothing. */
    int before = atomic_load(&n.count);
    CHECK_RC(mcpaxle_server_notify_list_changed(server, "templates"), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "\"templates\"") != NULL);
    CHECK_RC(mcpaxle_server_notify_list_changed(server, "tools"), MCPAXLE_OK);
    for (int i = 0; i < 300 && atomic_load(&n.count) == before; i++) sleep_ms(10);
    CHECK(atomic_load(&n.count) == before + 1);
    CHECK_RC(mcpaxle_server_notify_list_changed(server, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_server_notify_list_changed(NULL, "tools"), MCPAXLE_ERR_NULL);
    mcpaxle_subscription_free(sub);
    int seen = atomic_load(&n.count);
    mcpaxle_server_remove_tool(server, "added", NULL);
    sleep_ms(100);
    CHECK(atomic_load(&n.count) == seen); /* no callback after free */
    mcpaxle_subscription_free(NULL);
    CHECK_RC(mcpaxle_client_subscribe(c, "{\"toolsListChanged\":\"yes\"}", on_note, &n, &sub), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_subscribe(c, "{}", NULL, &n, &sub), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_subscribe(NULL, "{}", on_note, &n, &sub), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_subscription_acknowledged(NULL, &ack), MCPAXLE_ERR_NULL);
    mcpaxle_client_free(c);
}

TEST(stdio_client_against_a_c_server) {
    mcpaxle_client_options *o = NULL;
    mcpaxle_client_options_new("c-client-tests", "1.0", "{\"stderr\":\"null\"}", &o);
    mcpaxle_client *c = NULL;
    char *args = fmt("[\"--stdio-server\"]");
    CHECK_RC(mcpaxle_client_connect_stdio(self_path, args, o, &c), MCPAXLE_OK);
    free(args);
    mcpaxle_client_options_free(o);
    if (!c) return;
    char *out = NULL;
    CHECK_RC(mcpaxle_client_info(c, &out), MCPAXLE_OK);
    CHECK(out && strstr(out, "\"processId\":") && !strstr(out, "\"processId\":null"));
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_call_tool(c, "echo", "{\"via\":\"stdio\"}", NULL, &out), MCPAXLE_OK);
    CHECK_JSON(out, "/content/0/text", "{\"via\":\"stdio\"}");
    mcpaxle_string_free(out);
    CHECK_RC(mcpaxle_client_set_header(c, "X", "1"), MCPAXLE_ERR_USAGE);
    mcpaxle_client_free(c);
}

/* ---- OAuth, against fixtures/src/oauth_server.rs ------------------------------------------ */

static pid_t oauth_pid;
static uint16_t oauth_port;
static char oauth_log[] = "/tmp/mcpaxle-oauth-server-XXXXXX";

/* Starts the fixture on a free port; its stderr goes to a file, where its first line says the
 * port. */
static bool start_oauth_server(void) {
    const char *bin = getenv("MCPAXLE_OAUTH_SERVER");
    if (!bin || access(bin, X_OK) != 0) {
        fprintf(stderr, "  MCPAXLE_OAUTH_SERVER is not an executable (run bindings-c/tests/run.sh, which builds it)\n");
        return false;
    }
    int fd = mkstemp(oauth_log);
    if (fd < 0) return false;
    close(fd);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, oauth_log, O_WRONLY | O_TRUNC, 0600);
    char *argv[] = {(char *)bin, "--http", "127.0.0.1:0", NULL};
    extern char **environ;
    int rc = posix_spawn(&oauth_pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return false;
    for (int i = 0; i < 1000 && oauth_port == 0; i++) {
        FILE *f = fopen(oauth_log, "r");
        char line[256] = "";
        unsigned p = 0;
        if (f && fgets(line, sizeof line, f) && sscanf(line, "oauth_server: listening on http://127.0.0.1:%u/mcp", &p) == 1)
            oauth_port = (uint16_t)p;
        if (f) fclose(f);
        if (oauth_port == 0) sleep_ms(20);
    }
    return oauth_port != 0;
}

static void stop_oauth_server(void) {
    if (oauth_pid > 0) {
        kill(oauth_pid, SIGTERM);
        waitpid(oauth_pid, NULL, 0);
    }
    unlink(oauth_log);
}

/* GETs an http://127.0.0.1:PORT/... URL; returns the response head and body (free it). */
static char *http_get(const char *url) {
    unsigned p = 0;
    int path_at = 0;
    if (sscanf(url, "http://127.0.0.1:%u%n", &p, &path_at) != 1 || url[path_at] != '/') return NULL;
    int fd = connect_port((uint16_t)p);
    if (fd < 0) return NULL;
    char *req = fmt("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\n", url + path_at, p);
    bool sent = write(fd, req, strlen(req)) == (ssize_t)strlen(req);
    free(req);
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    for (ssize_t n; sent && (n = read(fd, buf + used, cap - used - 1)) > 0;) {
        used += (size_t)n;
        if (used + 1024 > cap) buf = realloc(buf, cap *= 2);
    }
    close(fd);
    buf[used] = '\0';
    return buf;
}

/* A header's value in a response head (free it), or NULL. */
static char *header_value(const char *response, const char *name) {
    char *key = fmt("\r\n%s:", name);
    const char *at = strcasestr(response, key);
    size_t skip = strlen(key);
    free(key);
    if (!at) return NULL;
    at += skip;
    while (*at == ' ') at++;
    return strndup(at, strcspn(at, "\r\n"));
}

/* A counter of the fixture's GET /stats ("registrations", "authorizations", ...). */
static unsigned long oauth_stat(const char *name) {
    char *url = fmt("http://127.0.0.1:%u/stats", (unsigned)oauth_port), *resp = http_get(url);
    char *body = resp ? strstr(resp, "\r\n\r\n") : NULL, *pointer = fmt("/%s", name), *v = NULL;
    if (body) mcpaxle_json_get(body + 4, pointer, &v);
    unsigned long n = v ? strtoul(v, NULL, 10) : 0;
    mcpaxle_string_free(v), free(pointer), free(resp), free(url);
    return n;
}

/* What an authorization handler of these tests does with the authorization URL. */
enum auth_mode {
    AUTH_BROWSER, /* as a browser would, on another thread: GET it, answer with the redirect */
    AUTH_REFUSE,  /* give up: complete with an error */
    AUTH_FORGE,   /* answer with a redirect the client did not ask for (another state) */
    AUTH_MISUSE,  /* complete with mcpaxle_reply_ok, which is not how */
};

struct authorizer {
    enum auth_mode mode;
    atomic_int calls;
    atomic_bool url_ok; /* the URL carried PKCE S256, state, resource */
    mcpaxle_result misuse[2];
    pthread_t threads[4];
    atomic_int threads_started;
};

struct browser {
    mcpaxle_reply *completion;
    char *url;
};

static void *browse(void *arg) {
    struct browser *b = arg;
    char *resp = http_get(b->url), *location = resp ? header_value(resp, "Location") : NULL;
    if (location)
        mcpaxle_reply_redirect(b->completion, location);
    else
        mcpaxle_reply_error(b->completion, MCPAXLE_ERR_TRANSPORT, "the authorization server did not redirect");
    free(location), free(resp), free(b->url), free(b);
    return NULL;
}

static void on_authorize(void *ud, const char *url, mcpaxle_reply *c) {
    struct authorizer *a = ud;
    atomic_fetch_add(&a->calls, 1);
    atomic_store(&a->url_ok, strstr(url, "code_challenge_method=S256") && strstr(url, "&state=") && strstr(url, "&resource="));
    switch (a->mode) {
    case AUTH_BROWSER: {
        int i = atomic_fetch_add(&a->threads_started, 1);
        struct browser *b = malloc(sizeof *b);
        b->completion = c, b->url = strdup(url);
        if (i < 4) {
            pthread_create(&a->threads[i], NULL, browse, b);
        } else {
            browse(b);
        }
        break;
    }
    case AUTH_REFUSE:
        mcpaxle_reply_error(c, MCPAXLE_ERR_CANCELLED, "the user closed the browser window");
        break;
    case AUTH_FORGE: {
        char *forged = fmt("http://127.0.0.1:9/callback?code=forged&state=forged&iss=http%%3A%%2F%%2F127.0.0.1%%3A%u", (unsigned)oauth_port);
        mcpaxle_reply_redirect(c, forged);
        free(forged);
        break;
    }
    case AUTH_MISUSE:
        a->misuse[0] = mcpaxle_reply_ok(c, "{}");
        a->misuse[1] = mcpaxle_reply_redirect(c, "http://127.0.0.1:9/callback");
        break;
    }
}

static void join_browsers(struct authorizer *a) {
    int n = atomic_load(&a->threads_started);
    for (int i = 0; i < n && i < 4; i++) pthread_join(a->threads[i], NULL);
}

/* Connects to the fixture with `oauth_json` and `authorize`, then calls `tool`: the first
 * failing step's code, its message in `*error` and the tool's text in `*text` (free both). */
static mcpaxle_result oauth_call(const char *oauth_json, mcpaxle_authorization_handler authorize, void *ud, const char *tool,
                                 const char *args, char **text, char **error) {
    *text = NULL, *error = NULL;
    mcpaxle_client_options *o = NULL;
    mcpaxle_client_options_new("c-oauth-tests", "1.0", "{\"requestTimeoutMs\":20000}", &o);
    mcpaxle_result r = mcpaxle_client_options_set_oauth(o, oauth_json, authorize, ud);
    char *url = fmt("http://127.0.0.1:%u/mcp", (unsigned)oauth_port), *out = NULL;
    mcpaxle_client *c = NULL;
    if (r == MCPAXLE_OK) r = mcpaxle_client_connect_http(url, o, &c);
    mcpaxle_client_options_free(o); /* the client copied what it needs */
    if (r == MCPAXLE_OK) r = mcpaxle_client_call_tool(c, tool, args, NULL, &out);
    if (r == MCPAXLE_OK)
        mcpaxle_json_get_string(out, "/content/0/text", text);
    else
        *error = strdup(mcpaxle_last_error_message());
    mcpaxle_string_free(out), free(url);
    mcpaxle_client_free(c);
    return r;
}

static void free_both(char **text, char **error) {
    mcpaxle_string_free(*text), free(*error);
    *text = NULL, *error = NULL;
}

TEST(oauth_following_the_redirect) {
    char *text = NULL, *error = NULL;
    unsigned long registrations = oauth_stat("registrations"), authorizations = oauth_stat("authorizations");
    /* NULL callback: the client follows the authorization server's redirect itself, registers
     * dynamically, and steps up for write_note's scope. */
    const char *json = "{\"redirectUri\":\"http://127.0.0.1:9/callback\",\"clientName\":\"c tests\",\"maxAuthorizations\":2}";
    CHECK_RC(oauth_call(json, NULL, NULL, "whoami", "{}", &text, &error), MCPAXLE_OK);
    CHECK(text && strncmp(text, "client ", 7) == 0 && strstr(text, "notes:read"));
    free_both(&text, &error);
    CHECK_RC(oauth_call(json, NULL, NULL, "write_note", "{\"text\":\"hi\"}", &text, &error), MCPAXLE_OK);
    CHECK_STR(text, "saved: hi");
    free_both(&text, &error);
    CHECK(oauth_stat("registrations") == registrations + 2); /* one client per connection */
    CHECK(oauth_stat("authorizations") == authorizations + 3); /* the second one stepped up */

    /* maxAuthorizations 0: the server's refusal is the answer. */
    json = "{\"redirectUri\":\"http://127.0.0.1:9/callback\",\"maxAuthorizations\":0}";
    CHECK(oauth_call(json, NULL, NULL, "whoami", "{}", &text, &error) != MCPAXLE_OK);
    free_both(&text, &error);
}

TEST(oauth_pre_registered_and_metadata_document_clients) {
    char *text = NULL, *error = NULL;
    unsigned long registrations = oauth_stat("registrations");
    char *mine = fmt("{\"redirectUri\":\"http://127.0.0.1:9/callback\",\"clientId\":\"preregistered-client\","
                     "\"clientSecret\":\"preregistered-secret\",\"issuer\":\"http://127.0.0.1:%u\"}",
                     (unsigned)oauth_port);
    CHECK_RC(oauth_call(mine, NULL, NULL, "whoami", "{}", &text, &error), MCPAXLE_OK);
    CHECK(text && strncmp(text, "client preregistered-client,", 28) == 0);
    free_both(&text, &error);
    free(mine);
    /* Credentials of another issuer are not used here: the client registers instead. */
    const char *json = "{\"redirectUri\":\"http://127.0.0.1:9/callback\",\"clientId\":\"preregistered-client\","
                       "\"clientSecret\":\"preregistered-secret\",\"issuer\":\"https://elsewhere.example\"}";
    CHECK_RC(oauth_call(json, NULL, NULL, "whoami", "{}", &text, &error), MCPAXLE_OK);
    CHECK(text && strncmp(text, "client ", 7) == 0 && !strstr(text, "preregistered-client"));
    free_both(&text, &error);
    json = "{\"redirectUri\":\"http://127.0.0.1:9/callback\",\"clientMetadataUrl\":\"https://app.example/oauth/client.json\"}";
    CHECK_RC(oauth_call(json, NULL, NULL, "whoami", "{}", &text, &error), MCPAXLE_OK);
    CHECK(text && strncmp(text, "client https://app.example/oauth/client.json,", 45) == 0);
    free_both(&text, &error);
    CHECK(oauth_stat("registrations") == registrations + 1); /* only the other issuer's */
}

TEST(oauth_authorization_handler) {
    const char *json = "{\"redirectUri\":\"http://127.0.0.1:9/callback\"}";
    char *text = NULL, *error = NULL;

    /* The host's user-agent step, answered later from another thread; twice with a step-up. */
    struct authorizer a = {.mode = AUTH_BROWSER};
    CHECK_RC(oauth_call(json, on_authorize, &a, "write_note", "{\"text\":\"by hand\"}", &text, &error), MCPAXLE_OK);
    CHECK_STR(text, "saved: by hand");
    CHECK(atomic_load(&a.calls) == 2);
    CHECK(atomic_load(&a.url_ok));
    free_both(&text, &error);
    join_browsers(&a);

    /* Giving up fails the request with the handler's code and message. */
    struct authorizer refuse = {.mode = AUTH_REFUSE};
    CHECK_RC(oauth_call(json, on_authorize, &refuse, "whoami", "{}", &text, &error), MCPAXLE_ERR_CANCELLED);
    CHECK(error && strstr(error, "the user closed the browser window"));
    if (error && !strstr(error, "closed")) fprintf(stderr, "  error: %s\n", error);
    free_both(&text, &error);

    /* A redirect with another state is refused before its code is read. */
    struct authorizer forge = {.mode = AUTH_FORGE};
    CHECK(oauth_call(json, on_authorize, &forge, "whoami", "{}", &text, &error) != MCPAXLE_OK);
    CHECK(error && strstr(error, "state does not match"));
    if (error && !strstr(error, "state")) fprintf(stderr, "  error: %s\n", error);
    free_both(&text, &error);

    /* mcpaxle_reply_ok is not how an authorization completes: the call fails, and the
     * handle is spent. */
    struct authorizer misuse = {.mode = AUTH_MISUSE};
    CHECK(oauth_call(json, on_authorize, &misuse, "whoami", "{}", &text, &error) != MCPAXLE_OK);
    CHECK_RC(misuse.misuse[0], MCPAXLE_ERR_USAGE);
    CHECK_RC(misuse.misuse[1], MCPAXLE_ERR_ALREADY_REPLIED);
    CHECK(error && strstr(error, "mcpaxle_reply_redirect"));
    free_both(&text, &error);
}

static void on_elicitation_redirect(void *ud, const char *params, mcpaxle_reply *c) {
    (void)params;
    *(mcpaxle_result *)ud = mcpaxle_reply_redirect(c, "http://127.0.0.1:9/callback");
}

TEST(oauth_bad_input) {
    mcpaxle_client_options *o = NULL;
    mcpaxle_client_options_new("n", "1", NULL, &o);
    const char *ok = "{\"redirectUri\":\"http://127.0.0.1:9/callback\"}";
    CHECK_RC(mcpaxle_client_options_set_oauth(NULL, ok, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, NULL, NULL, NULL), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, "{bad", NULL, NULL), MCPAXLE_ERR_INVALID_JSON);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, "{}", NULL, NULL), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "redirectUri") != NULL);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, "[]", NULL, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, "{\"redirectUri\":\"x:/cb\",\"scopes\":[]}", NULL, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, "{\"redirectUri\":\"x:/cb\",\"maxAuthorizations\":-1}", NULL, NULL), MCPAXLE_ERR_USAGE);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, "{\"redirectUri\":\"x:/cb\",\"clientSecret\":\"s\"}", NULL, NULL), MCPAXLE_ERR_USAGE);
    CHECK(strstr(mcpaxle_last_error_message(), "clientId") != NULL);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, ok, NULL, NULL), MCPAXLE_OK);
    CHECK_RC(mcpaxle_client_options_set_oauth(o, ok, on_authorize, NULL), MCPAXLE_OK); /* replaces */
    mcpaxle_client_options_free(o);
    CHECK_RC(mcpaxle_reply_redirect(NULL, "http://127.0.0.1:9/callback"), MCPAXLE_ERR_NULL);
    CHECK_RC(mcpaxle_reply_redirect((mcpaxle_reply *)(uintptr_t)0x7fffffff, "x"), MCPAXLE_ERR_ALREADY_REPLIED);

    /* An input handler's completion is not an authorization's. */
    mcpaxle_result seen = MCPAXLE_OK;
    mcpaxle_client_options_new("c-client-tests", "1.0", NULL, &o);
    mcpaxle_client_options_on_elicitation(o, on_elicitation_redirect, &seen);
    char *url = fmt("http://127.0.0.1:%u/mcp", (unsigned)port), *out = NULL;
    mcpaxle_client *c = NULL;
    CHECK_RC(mcpaxle_client_connect_http(url, o, &c), MCPAXLE_OK);
    CHECK(mcpaxle_client_call_tool(c, "ask", "{}", NULL, &out) != MCPAXLE_OK);
    CHECK_RC(seen, MCPAXLE_ERR_USAGE);
    mcpaxle_string_free(out), free(url);
    mcpaxle_client_free(c);
    mcpaxle_client_options_free(o);
}

/* Every invalid OAuth option object of tests/auth_option_cases.json (shared with the core,
 * Python and Node) is refused with the core's message naming the member at fault. */
TEST(every_shared_bad_oauth_is_refused_at_its_member) {
    char *doc = shared_table("auth_option_cases.json");
    CHECK(doc != NULL);
    if (!doc) return;
    mcpaxle_client_options *o = NULL;
    mcpaxle_client_options_new("n", "1", NULL, &o);
    char *valid = json_value(doc, "/oauth/valid");
    CHECK_RC(mcpaxle_client_options_set_oauth(o, valid, NULL, NULL), MCPAXLE_OK);
    size_t n = json_count(doc, "/oauth/cases");
    CHECK(n >= 10);
    for (size_t i = 0; i < n; i++) {
        char *at = fmt("/oauth/cases/%zu", i), *p;
        char *name = json_text(doc, (p = fmt("%s/name", at))), *set = (free(p), json_value(doc, (p = fmt("%s/set", at))));
        char *path = (free(p), json_text(doc, (p = fmt("%s/path", at))));
        char *message = (free(p), json_text(doc, (p = fmt("%s/message", at))));
        free(p);
        char *options = overlay(valid, set);
        mcpaxle_result rc = mcpaxle_client_options_set_oauth(o, options, NULL, NULL);
        char *got = strdup(mcpaxle_last_error_message());
        if (rc != MCPAXLE_ERR_USAGE || !says(got, path, message) || strncmp(got, "oauth_json is not valid: ", 25) != 0) {
            fprintf(stderr, "  %s: %s gave %d %s, expected %s: %s\n", name, options, rc, got, path, message);
            CHECK(false);
        }
        free(at), free(name), free(set), free(path), free(message), free(options), free(got);
    }
    mcpaxle_client_options_free(o);
    free(valid), free(doc);
}

static int stdio_server(void) {
    mcpaxle_server *s = build_server();
    mcpaxle_result r = mcpaxle_server_serve_stdio(s, NULL);
    mcpaxle_server_free(s);
    return r == MCPAXLE_OK ? 0 : 1;
}

int main(int argc, char **argv) {
    self_path = argv[0];
    if (argc == 2 && strcmp(argv[1], "--stdio-server") == 0) return stdio_server();
    signal(SIGPIPE, SIG_IGN);
    server = build_server();
    http = start_http(server, &port);
    RUN(options_and_tokens_with_bad_input);
    RUN(every_shared_bad_oauth_is_refused_at_its_member);
    RUN(blocking_methods);
    RUN(input_handlers_progress_and_logs);
    RUN(async_methods_and_cancellation);
    RUN(subscriptions);
    RUN(stdio_client_against_a_c_server);
    if (start_oauth_server()) {
        RUN(oauth_following_the_redirect);
        RUN(oauth_pre_registered_and_metadata_document_clients);
        RUN(oauth_authorization_handler);
        RUN(oauth_bad_input);
    } else {
        tests_failed++;
        printf("not ok - oauth (the fixture target/debug/oauth_server did not start)\n");
    }
    stop_oauth_server();
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(server);
    return summary();
}

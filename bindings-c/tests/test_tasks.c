/*
 * C tests of tools that run as tasks of the Tasks extension (`taskSupport` in the tool's
 * options): the C client follows each task to its result; the handler sees its `taskId` in
 * mcpaxle_context_info, its ask blocks until the client's input handler answered the task's
 * input request, tasks/cancel (the client's cancel token) makes mcpaxle_context_is_cancelled
 * true, a protocol error fails the task, and `deferTask` starts the task at
 * mcpaxle_context_start_task. Run by bindings-c/tests/run.sh under valgrind.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

static char *task_id_of(mcpaxle_context *ctx) {
    char *info = NULL, *id = NULL;
    if (mcpaxle_context_info(ctx, &info) == MCPAXLE_OK) mcpaxle_json_get_string(info, "/taskId", &id);
    mcpaxle_string_free(info);
    return id;
}

/* Answers "task" or "plain" as the call runs as a task or not. */
static void report_task(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *id = task_id_of(ctx);
    mcpaxle_context_progress(ctx, 1, 2, "half-way");
    reply_text(c, id && strlen(id) >= 16 ? "task" : "plain");
    mcpaxle_string_free(id);
}

static void ask_in_task(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL, *name = NULL;
    mcpaxle_result r = mcpaxle_context_elicit(
        ctx, "name", "{\"mode\":\"form\",\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}", &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    mcpaxle_json_get_string(answer, "/content/name", &name);
    char *text = fmt("Hello, %s!", name ? name : "?");
    reply_text(c, text);
    free(text), mcpaxle_string_free(name), mcpaxle_string_free(answer);
}

static atomic_int saw_cancel, running;

static void until_cancelled(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    atomic_store(&running, 1);
    for (int i = 0; i < 1000 && !mcpaxle_context_is_cancelled(ctx); i++) sleep_ms(10);
    atomic_store(&saw_cancel, mcpaxle_context_is_cancelled(ctx));
    reply_text(c, "stopped");
}

static void protocol_error(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    mcpaxle_reply_error(c, MCPAXLE_ERR_INVALID_PARAMS, "bad input for the job");
}

static void deferred(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *before = task_id_of(ctx);
    bool started = false;
    mcpaxle_result r = mcpaxle_context_start_task(ctx, &started);
    char *after = task_id_of(ctx);
    char *text = fmt("%s %s before:%s after:%s", mcpaxle_result_name(r), started ? "started" : "not-started",
                     before ? "task" : "none", after ? "task" : "none");
    reply_text(c, text);
    free(text), mcpaxle_string_free(before), mcpaxle_string_free(after);
}

static void on_elicitation(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    mcpaxle_reply_ok(c, "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}");
}

static void add(mcpaxle_server *s, const char *name, const char *options, mcpaxle_handler h) {
    char *def = fmt("{\"name\":\"%s\",\"inputSchema\":" NO_ARGS "}", name);
    CHECK_RC(mcpaxle_server_add_tool_with_options(s, def, options, h, NULL), MCPAXLE_OK);
    free(def);
}

struct cancel_later {
    mcpaxle_cancel_token *token;
};

static void *cancel_when_running(void *arg) {
    struct cancel_later *l = arg;
    for (int i = 0; i < 500 && !atomic_load(&running); i++) sleep_ms(10);
    mcpaxle_cancel_token_cancel(l->token);
    return NULL;
}

TEST(tools_run_as_tasks_followed_by_the_client) {
    mcpaxle_server *s = new_server("{\"tasks\":{\"pollIntervalMs\":20}}");
    add(s, "plain", NULL, report_task);
    add(s, "job", "{\"taskSupport\":\"optional\"}", report_task);
    add(s, "ask", "{\"taskSupport\":\"required\"}", ask_in_task);
    add(s, "forever", "{\"taskSupport\":\"optional\"}", until_cancelled);
    add(s, "broken", "{\"taskSupport\":\"optional\"}", protocol_error);
    add(s, "deferred", "{\"taskSupport\":\"optional\",\"deferTask\":true}", deferred);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    mcpaxle_client_options *o = NULL;
    CHECK_RC(mcpaxle_client_options_new("tasks", "1.0", "{\"cache\":false}", &o), MCPAXLE_OK);
    mcpaxle_client_options_on_elicitation(o, on_elicitation, NULL);
    mcpaxle_client *c = connect_local(port, o);
    char *out = NULL;
    if (c) {
        CHECK_RC(mcpaxle_client_call_tool(c, "job", "{}", NULL, &out), MCPAXLE_OK);
        CHECK_JSON(out, "/content/0/text", "task");
        mcpaxle_string_free(out), out = NULL;
        CHECK_RC(mcpaxle_client_call_tool(c, "plain", "{}", NULL, &out), MCPAXLE_OK);
        CHECK_JSON(out, "/content/0/text", "plain");
        mcpaxle_string_free(out), out = NULL;

        /* The ask is the task's input request, answered by the client's elicitation handler. */
        CHECK_RC(mcpaxle_client_call_tool(c, "ask", "{}", NULL, &out), MCPAXLE_OK);
        CHECK_JSON(out, "/content/0/text", "Hello, Ada!");
        mcpaxle_string_free(out), out = NULL;

        /* Cancelling the call sends tasks/cancel: the handler sees it. */
        mcpaxle_cancel_token *token = NULL;
        mcpaxle_call_options *co = NULL;
        CHECK_RC(mcpaxle_cancel_token_new(&token), MCPAXLE_OK);
        CHECK_RC(mcpaxle_call_options_new(NULL, &co), MCPAXLE_OK);
        CHECK_RC(mcpaxle_call_options_set_cancel(co, token), MCPAXLE_OK);
        struct cancel_later later = {token};
        pthread_t canceller;
        pthread_create(&canceller, NULL, cancel_when_running, &later);
        CHECK_RC(mcpaxle_client_call_tool(c, "forever", "{}", co, &out), MCPAXLE_ERR_CANCELLED);
        pthread_join(canceller, NULL);
        for (int i = 0; i < 500 && !atomic_load(&saw_cancel); i++) sleep_ms(10);
        CHECK(atomic_load(&saw_cancel));
        mcpaxle_call_options_free(co);
        mcpaxle_cancel_token_free(token);

        /* A protocol error fails the task; the call fails with it. */
        CHECK_RC(mcpaxle_client_call_tool(c, "broken", "{}", NULL, &out), MCPAXLE_ERR_INVALID_PARAMS);
        CHECK(strstr(mcpaxle_last_error_message(), "bad input for the job") != NULL);

        /* deferTask: an ordinary call until the handler starts the task. */
        CHECK_RC(mcpaxle_client_call_tool(c, "deferred", "{}", NULL, &out), MCPAXLE_OK);
        CHECK_JSON(out, "/content/0/text", "MCPAXLE_OK started before:none after:task");
        mcpaxle_string_free(out), out = NULL;
        mcpaxle_client_free(c);
    }
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(bad_task_options_are_refused_naming_the_option) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool_with_options(s, "{\"name\":\"t\",\"inputSchema\":" NO_ARGS "}",
                                                  "{\"taskSupport\":\"sometimes\"}", report_task, NULL),
             MCPAXLE_ERR_INVALID_PARAMS);
    CHECK(strstr(mcpaxle_last_error_message(), "taskSupport") != NULL);
    mcpaxle_server_free(s);
    mcpaxle_server *bad = NULL;
    CHECK(mcpaxle_server_new("x", "1", "{\"tasks\":{\"ttlMs\":0}}", &bad) != MCPAXLE_OK);
    CHECK(strstr(mcpaxle_last_error_message(), "ttlMs") != NULL);
    mcpaxle_server_free(bad);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    RUN(tools_run_as_tasks_followed_by_the_client);
    RUN(bad_task_options_are_refused_naming_the_option);
    return summary();
}

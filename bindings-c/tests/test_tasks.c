/*
 * C tests of tools that run as tasks of the Tasks extension (`taskSupport` in the tool's
 * options): the C client follows each task to its result; the handler sees its `taskId` in
 * mcpaxle_context_info, its ask blocks until the client's input handler answered the task's
 * input request, tasks/cancel (the client's cancel token) makes mcpaxle_context_is_cancelled
 * true, a protocol error fails the task, and `deferTask` starts the task at
 * mcpaxle_context_start_task. The explicit handle (mcpaxle_client_call_tool_as_task,
 * mcpaxle_client_task, mcpaxle_tool_task_*) polls, follows and cancels such a task, blocking and
 * async. Run by bindings-c/tests/run.sh under valgrind.
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

static atomic_int waits_running, waits_saw_cancel;

static void waits(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    atomic_store(&waits_running, 1);
    for (int i = 0; i < 1000 && !mcpaxle_context_is_cancelled(ctx); i++) sleep_ms(10);
    atomic_store(&waits_saw_cancel, mcpaxle_context_is_cancelled(ctx));
    reply_text(c, "stopped");
}

/* What an _async callback delivered. */
struct outcome {
    atomic_int done;
    mcpaxle_result code;
    char *json;
    mcpaxle_tool_task *task;
};

static void on_started(void *ud, mcpaxle_result code, mcpaxle_tool_task *task, const char *error_json) {
    struct outcome *o = ud;
    o->code = code, o->task = task, o->json = error_json ? strdup(error_json) : NULL;
    atomic_store(&o->done, 1);
}

static void on_result(void *ud, mcpaxle_result code, const char *json) {
    struct outcome *o = ud;
    o->code = code, o->json = json ? strdup(json) : NULL;
    atomic_store(&o->done, 1);
}

static void wait_for(struct outcome *o) {
    for (int i = 0; i < 1000 && !atomic_load(&o->done); i++) sleep_ms(10);
    CHECK(atomic_load(&o->done));
}

/* Polls mcpaxle_tool_task_status until the task has `status`; the last status JSON (the
 * caller's). */
static char *status_until(mcpaxle_tool_task *t, const char *status) {
    char *json = NULL;
    for (int i = 0; i < 500; i++) {
        mcpaxle_string_free(json), json = NULL;
        if (mcpaxle_tool_task_status(t, NULL, &json) != MCPAXLE_OK) break;
        char *now = json_at(json, "/status");
        bool there = now && strcmp(now, status) == 0;
        free(now);
        if (there) return json;
        sleep_ms(20);
    }
    fprintf(stderr, "  the task never became %s: %s\n", status, json ? json : mcpaxle_last_error_message());
    CHECK(false);
    return json;
}

TEST(the_task_handle_polls_follows_and_cancels) {
    mcpaxle_server *s = new_server("{\"tasks\":{\"pollIntervalMs\":20}}");
    add(s, "plain", NULL, report_task);
    add(s, "ask", "{\"taskSupport\":\"required\"}", ask_in_task);
    add(s, "waits", "{\"taskSupport\":\"optional\"}", waits);
    add(s, "broken", "{\"taskSupport\":\"optional\"}", protocol_error);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    mcpaxle_client_options *o = NULL;
    CHECK_RC(mcpaxle_client_options_new("tasks", "1.0", "{\"cache\":false}", &o), MCPAXLE_OK);
    mcpaxle_client_options_on_elicitation(o, on_elicitation, NULL);
    mcpaxle_client *c = connect_local(port, o);
    char *out = NULL, *id = NULL, *st = NULL;
    mcpaxle_tool_task *t = NULL;
    if (c) {
        /* The task's question shows in its status; the result answers it and follows to the end. */
        CHECK_RC(mcpaxle_client_call_tool_as_task(c, "ask", "{}", NULL, &t), MCPAXLE_OK);
        CHECK_RC(mcpaxle_tool_task_id(t, &id), MCPAXLE_OK);
        CHECK(id != NULL && strlen(id) >= 16);
        st = status_until(t, "input_required");
        CHECK_JSON(st, "/inputRequests/name/method", "elicitation/create");
        mcpaxle_string_free(st), st = NULL;
        CHECK_RC(mcpaxle_tool_task_result(t, NULL, &out), MCPAXLE_OK);
        CHECK_JSON(out, "/content/0/text", "Hello, Ada!");
        mcpaxle_string_free(out), out = NULL;
        CHECK_RC(mcpaxle_tool_task_status(t, NULL, &st), MCPAXLE_OK);
        CHECK_JSON(st, "/status", "completed");
        CHECK_JSON(st, "/result/content/0/text", "Hello, Ada!");
        mcpaxle_string_free(st), st = NULL;
        mcpaxle_tool_task_free(t), t = NULL;

        /* Made again from the id alone; its result, async. */
        CHECK_RC(mcpaxle_client_task(c, id, &t), MCPAXLE_OK);
        struct outcome r = {0};
        CHECK_RC(mcpaxle_tool_task_result_async(t, NULL, &r, on_result), MCPAXLE_OK);
        wait_for(&r);
        CHECK_RC(r.code, MCPAXLE_OK);
        CHECK_JSON(r.json, "/content/0/text", "Hello, Ada!");
        free(r.json);
        mcpaxle_tool_task_free(t), t = NULL;
        mcpaxle_string_free(id), id = NULL;

        /* An ordinary tool, started async: the handle is complete at once. */
        struct outcome started = {0};
        CHECK_RC(mcpaxle_client_call_tool_as_task_async(c, "plain", "{}", NULL, &started, on_started), MCPAXLE_OK);
        wait_for(&started);
        CHECK_RC(started.code, MCPAXLE_OK);
        CHECK(started.task != NULL && started.json == NULL);
        if (started.task) {
            CHECK_RC(mcpaxle_tool_task_id(started.task, &id), MCPAXLE_OK);
            CHECK(id == NULL);
            CHECK_RC(mcpaxle_tool_task_result(started.task, NULL, &out), MCPAXLE_OK);
            CHECK_JSON(out, "/content/0/text", "plain");
            mcpaxle_string_free(out), out = NULL;
            CHECK_RC(mcpaxle_tool_task_status(started.task, NULL, &st), MCPAXLE_ERR_USAGE);
            CHECK_RC(mcpaxle_tool_task_cancel(started.task), MCPAXLE_OK);
            mcpaxle_tool_task_free(started.task);
        }

        /* A failed task: its error in the status, its code from the result. */
        CHECK_RC(mcpaxle_client_call_tool_as_task(c, "broken", "{}", NULL, &t), MCPAXLE_OK);
        CHECK_RC(mcpaxle_tool_task_result(t, NULL, &out), MCPAXLE_ERR_INVALID_PARAMS);
        CHECK(strstr(mcpaxle_last_error_message(), "bad input for the job") != NULL);
        CHECK_RC(mcpaxle_tool_task_status(t, NULL, &st), MCPAXLE_OK);
        CHECK_JSON(st, "/error/code", "-32602");
        mcpaxle_string_free(st), st = NULL;
        mcpaxle_tool_task_free(t), t = NULL;

        /* Freeing the handle (with a wait pending) does not cancel the task; cancel does. */
        CHECK_RC(mcpaxle_client_call_tool_as_task(c, "waits", "{}", NULL, &t), MCPAXLE_OK);
        CHECK_RC(mcpaxle_tool_task_id(t, &id), MCPAXLE_OK);
        struct outcome pending = {0};
        CHECK_RC(mcpaxle_tool_task_result_async(t, NULL, &pending, on_result), MCPAXLE_OK);
        mcpaxle_tool_task_free(t), t = NULL;
        CHECK(atomic_load(&pending.done));
        CHECK_RC(pending.code, MCPAXLE_ERR_CANCELLED);
        free(pending.json);
        sleep_ms(100);
        CHECK(!atomic_load(&waits_saw_cancel));
        if (id) {
            CHECK_RC(mcpaxle_client_task(c, id, &t), MCPAXLE_OK);
            CHECK_RC(mcpaxle_tool_task_status(t, NULL, &st), MCPAXLE_OK);
            CHECK_JSON(st, "/status", "working");
            mcpaxle_string_free(st), st = NULL;
            struct outcome cancelled = {0};
            CHECK_RC(mcpaxle_tool_task_cancel_async(t, &cancelled, on_result), MCPAXLE_OK);
            wait_for(&cancelled);
            CHECK_RC(cancelled.code, MCPAXLE_OK);
            free(cancelled.json);
            st = status_until(t, "cancelled");
            mcpaxle_string_free(st), st = NULL;
            CHECK_RC(mcpaxle_tool_task_result(t, NULL, &out), MCPAXLE_ERR_CANCELLED);
            for (int i = 0; i < 500 && !atomic_load(&waits_saw_cancel); i++) sleep_ms(10);
            CHECK(atomic_load(&waits_saw_cancel));
            mcpaxle_tool_task_free(t), t = NULL;
        }
        mcpaxle_string_free(id), id = NULL;

        /* An unknown id fails at its first request. */
        CHECK_RC(mcpaxle_client_task(c, "not-a-task", &t), MCPAXLE_OK);
        CHECK(mcpaxle_tool_task_status(t, NULL, &st) != MCPAXLE_OK);
        mcpaxle_tool_task_free(t), t = NULL;
        mcpaxle_tool_task_free(NULL);
        mcpaxle_client_free(c);
    }
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
}

TEST(bad_task_options_are_refused_naming_the_option) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool_with_options(s, "{\"name\":\"t\",\"inputSchema\":" NO_ARGS "}",
                                                  "{\"taskSupport\":\"sometimes\"}", report_task, NULL),
             MCPAXLE_ERR_USAGE);
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
    RUN(the_task_handle_polls_follows_and_cancels);
    RUN(bad_task_options_are_refused_naming_the_option);
    return summary();
}

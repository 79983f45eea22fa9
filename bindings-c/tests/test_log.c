/*
 * C tests of mcpaxle_set_log_handler: the core's log events reach the application's handler
 * (level, target, message, fields), on the core's log thread; nothing after the handler is
 * removed. The event used: a tool handler failing unexpectedly (MCPAXLE_ERR_INTERNAL), which
 * the core logs as an error. Run by bindings-c/tests/run.sh under valgrind.
 *
 * The last line printed is "N passed, N failed" (one count per test function).
 */
#include "harness.h"

struct seen {
    pthread_mutex_t lock;
    int events;
    mcpaxle_log_level level;
    char *target, *message, *fields;
    pthread_t thread;
};

static void on_log(void *ud, mcpaxle_log_level level, const char *target, const char *message, const char *fields_json) {
    struct seen *s = ud;
    if (strstr(message, "unexpected exception") == NULL) return;
    pthread_mutex_lock(&s->lock);
    s->events++;
    s->level = level;
    free(s->target), free(s->message), free(s->fields);
    s->target = strdup(target), s->message = strdup(message), s->fields = strdup(fields_json);
    s->thread = pthread_self();
    pthread_mutex_unlock(&s->lock);
}

static int events_of(struct seen *s) {
    pthread_mutex_lock(&s->lock);
    int n = s->events;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void fails(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    mcpaxle_reply_error(c, MCPAXLE_ERR_INTERNAL, "the disk is full");
}

TEST(the_cores_log_events_reach_the_handler) {
    struct seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    CHECK_RC(mcpaxle_set_log_handler(on_log, &s), MCPAXLE_OK);
    mcpaxle_server *server = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(server, "{\"name\":\"fails\",\"inputSchema\":{\"type\":\"object\"}}", fails, NULL), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(server, &port);
    char *body = mcp(port, "tools/call", "fails", "\"name\":\"fails\",\"arguments\":{}", NULL);
    free(body);
    for (int i = 0; i < 500 && events_of(&s) == 0; i++) sleep_ms(10);
    pthread_mutex_lock(&s.lock);
    CHECK(s.events == 1);
    CHECK(s.level == MCPAXLE_LOG_ERROR);
    CHECK_STR(s.target, "mcpaxle::server::dispatch");
    CHECK(s.message && strstr(s.message, "the disk is full") != NULL);
    char *handler = s.fields ? json_text(s.fields, "/handler") : NULL;
    CHECK(handler && strstr(handler, "fails") != NULL);
    free(handler);
    CHECK(s.events == 0 || !pthread_equal(s.thread, pthread_self()));
    pthread_mutex_unlock(&s.lock);

    /* Removed: the next event goes nowhere. */
    CHECK_RC(mcpaxle_set_log_handler(NULL, NULL), MCPAXLE_OK);
    body = mcp(port, "tools/call", "fails", "\"name\":\"fails\",\"arguments\":{}", NULL);
    free(body);
    sleep_ms(200);
    CHECK(events_of(&s) == 1);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(server);
    free(s.target), free(s.message), free(s.fields);
}

int main(void) {
    RUN(the_cores_log_events_reach_the_handler);
    return summary();
}

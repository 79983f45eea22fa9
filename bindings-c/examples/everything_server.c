/*
 * The "everything" server in C: every fixture the official MCP conformance suite exercises,
 * with every handler written in C on top of include/mcpaxle.h. A port of
 * core/examples/everything_server.rs.
 *
 *   everything_server --http 127.0.0.1:3000    (endpoint /mcp; SIGINT/SIGTERM stop it cleanly)
 *   everything_server --stdio
 *
 * Build: cc everything_server.c $(pkg-config --cflags --libs mcpaxle) -o everything_server
 */
#define _GNU_SOURCE
#include <mcpaxle.h>

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A 1x1 red PNG. */
#define PNG "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
/* A minimal WAV file (44-byte header, 8 silent samples). */
#define WAV "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

/* ---- small helpers -------------------------------------------------------------------- */

static void die(const char *what, mcpaxle_result r) {
    fprintf(stderr, "everything_server: %s: %s: %s\n", what, mcpaxle_result_name(r), mcpaxle_last_error_message());
    exit(1);
}

static void check(const char *what, mcpaxle_result r) {
    if (r != MCPAXLE_OK) die(what, r);
}

/* printf into a fresh heap string (free it). */
static char *fmt(const char *format, ...) {
    va_list ap;
    char *s = NULL;
    va_start(ap, format);
    if (vasprintf(&s, format, ap) < 0) s = NULL;
    va_end(ap);
    if (!s) abort();
    return s;
}

/* `text` as a JSON string literal (free it with mcpaxle_string_free). */
static char *quote(const char *text) {
    char *q = NULL;
    check("quote", mcpaxle_json_quote(text, &q));
    return q;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void complete_json(mcpaxle_reply *c, const char *json) {
    mcpaxle_result r = mcpaxle_reply_ok(c, json);
    if (r != MCPAXLE_OK)
        fprintf(stderr, "everything_server: completion: %s: %s\n", mcpaxle_result_name(r), mcpaxle_last_error_message());
}

/* Completes a tool call with one text block. */
static void complete_text(mcpaxle_reply *c, const char *text) {
    char *q = quote(text);
    char *json = fmt("{\"content\":[{\"type\":\"text\",\"text\":%s}]}", q);
    complete_json(c, json);
    free(json);
    mcpaxle_string_free(q);
}

/* The string at `pointer` in `json`, or `fallback` (free the result with free()). */
static char *get_string(const char *json, const char *pointer, const char *fallback) {
    char *s = NULL;
    if (json && mcpaxle_json_get_string(json, pointer, &s) == MCPAXLE_OK && s) {
        char *copy = strdup(s);
        mcpaxle_string_free(s);
        return copy;
    }
    return strdup(fallback);
}

/* The JSON text at `pointer` in `json`, or "null" (free the result with free()). */
static char *get_json(const char *json, const char *pointer) {
    char *s = NULL;
    if (json && mcpaxle_json_get(json, pointer, &s) == MCPAXLE_OK && s) {
        char *copy = strdup(s);
        mcpaxle_string_free(s);
        return copy;
    }
    return strdup("null");
}

static char *elicit_name(const char *message) {
    char *q = quote(message);
    char *p = fmt("{\"mode\":\"form\",\"message\":%s,\"requestedSchema\":{\"type\":\"object\","
                  "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}",
                  q);
    mcpaxle_string_free(q);
    return p;
}

static char *sampling(const char *prompt) {
    char *q = quote(prompt);
    char *p = fmt("{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":%s}}],\"maxTokens\":100}", q);
    mcpaxle_string_free(q);
    return p;
}

/* Adds a tool; `options` (NULL for none) is the tool's options JSON, e.g. {"taskSupport":"optional"}. */
static void add_tool_with(mcpaxle_server *s, const char *name, const char *description, const char *schema,
                          const char *options, mcpaxle_handler h, void *ud) {
    char *qn = quote(name), *qd = quote(description);
    char *def = fmt("{\"name\":%s,\"description\":%s,\"inputSchema\":%s}", qn, qd, schema);
    check(name, mcpaxle_server_add_tool_with_options(s, def, options, h, ud));
    free(def);
    mcpaxle_string_free(qn);
    mcpaxle_string_free(qd);
}

static void add_tool(mcpaxle_server *s, const char *name, const char *description, const char *schema, mcpaxle_handler h, void *ud) {
    add_tool_with(s, name, description, schema, NULL, h, ud);
}

/* ---- content tools ---------------------------------------------------------------------- */

static void simple_text(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_text(c, "This is a simple text response for testing.");
}

static void image_content(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_json(c, "{\"content\":[{\"type\":\"image\",\"data\":\"" PNG "\",\"mimeType\":\"image/png\"}]}");
}

static void audio_content(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_json(c, "{\"content\":[{\"type\":\"audio\",\"data\":\"" WAV "\",\"mimeType\":\"audio/wav\"}]}");
}

static void embedded_resource(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_json(c, "{\"content\":[{\"type\":\"resource\",\"resource\":{\"uri\":\"test://embedded-resource\","
                     "\"mimeType\":\"text/plain\",\"text\":\"This is an embedded resource content.\"}}]}");
}

static void multiple_content(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_json(c, "{\"content\":["
                     "{\"type\":\"text\",\"text\":\"Multiple content types test:\"},"
                     "{\"type\":\"image\",\"data\":\"" PNG "\",\"mimeType\":\"image/png\"},"
                     "{\"type\":\"resource\",\"resource\":{\"uri\":\"test://mixed-content-resource\","
                     "\"mimeType\":\"application/json\",\"text\":\"{\\\"test\\\":\\\"data\\\",\\\"value\\\":123}\"}}]}");
}

static void error_handling(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    mcpaxle_reply_error(c, MCPAXLE_ERR_TOOL, "This tool intentionally returns an error for testing");
}

static void with_progress(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    for (int p = 0; p <= 100; p += 50) {
        char *msg = fmt("Completed step %d", p / 50);
        mcpaxle_context_progress(ctx, p, 100, msg);
        free(msg);
        sleep_ms(20);
    }
    complete_text(c, "Progress tool completed");
}

/* SEP-1699 polling: the response stream ends at once; the result reaches a legacy client
 * after it reconnects with Last-Event-ID. */
static void reconnection(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    mcpaxle_context_close_stream(ctx, 500);
    sleep_ms(100);
    complete_text(c, "Reconnection test completed");
}

static void with_logging(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    const char *steps[] = {"\"Tool execution started\"", "\"Tool processing data\"", "\"Tool execution completed\""};
    for (int i = 0; i < 3; i++) {
        mcpaxle_context_log(ctx, MCPAXLE_LOG_INFO, "everything_server", steps[i]);
        sleep_ms(10);
    }
    complete_text(c, "Logging tool completed");
}

static void schema_2020_12(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *text = fmt("ok: %s", args);
    complete_text(c, text);
    free(text);
}

static void custom_header(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *region = get_string(args, "/region", "");
    char *text = fmt("region=%s", region);
    complete_text(c, text);
    free(text);
    free(region);
}

static void add_content_tools(mcpaxle_server *s) {
    add_tool(s, "test_simple_text", "Returns a simple text response", NO_ARGS, simple_text, NULL);
    add_tool(s, "test_image_content", "Returns an image", NO_ARGS, image_content, NULL);
    add_tool(s, "test_audio_content", "Returns audio", NO_ARGS, audio_content, NULL);
    add_tool(s, "test_embedded_resource", "Returns an embedded resource", NO_ARGS, embedded_resource, NULL);
    add_tool(s, "test_multiple_content_types", "Returns text, image and a resource", NO_ARGS, multiple_content, NULL);
    add_tool(s, "test_error_handling", "Always fails with a tool error", NO_ARGS, error_handling, NULL);
    add_tool(s, "test_tool_with_progress", "Reports progress 0, 50, 100", NO_ARGS, with_progress, NULL);
    add_tool(s, "test_reconnection", "Closes the response stream mid-call; the result comes after the client reconnects",
             NO_ARGS, reconnection, NULL);
    add_tool(s, "test_logging_tool", "Logs three messages at info level (only when the request sets a log level)", NO_ARGS,
             with_logging, NULL);
    add_tool(s, "test_tool_with_logging", "Logs three messages at info level (only when the request sets a log level)",
             NO_ARGS, with_logging, NULL);
    add_tool(s, "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
             "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
             "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\",\"properties\":{"
             "\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
             "\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"
             "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
             "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
             "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
             "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},\"required\":[\"contactMethod\"]},"
             "\"then\":{\"required\":[\"phone\"]},\"else\":{\"required\":[\"email\"]},"
             "\"additionalProperties\":false}",
             schema_2020_12, NULL);
    add_tool(s, "test_custom_header", "Mirrors its region argument into the Mcp-Param-Region header",
             "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\",\"description\":\"Where to run\","
             "\"x-mcp-header\":\"Region\"},\"query\":{\"type\":\"string\"}},\"required\":[\"region\"]}",
             custom_header, NULL);
}

/* ---- tools that change the server (user_data is the server) ----------------------------- */

static void dynamic_tool(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_text(c, "dynamic");
}

static void dynamic_prompt(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_json(c, "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"dynamic\"}}]}");
}

static void trigger_tool_change(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args, (void)ctx;
    mcpaxle_server *s = ud;
    bool removed = false;
    mcpaxle_server_remove_tool(s, "test_dynamic_tool", &removed);
    if (!removed) add_tool(s, "test_dynamic_tool", "Added at run time", NO_ARGS, dynamic_tool, NULL);
    complete_text(c, "Tool list changed");
}

static void trigger_prompt_change(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args, (void)ctx;
    mcpaxle_server *s = ud;
    bool removed = false;
    mcpaxle_server_remove_prompt(s, "test_dynamic_prompt", &removed);
    if (!removed)
        check("test_dynamic_prompt",
              mcpaxle_server_add_prompt(s, "{\"name\":\"test_dynamic_prompt\",\"description\":\"Added at run time\"}",
                                        dynamic_prompt, NULL));
    complete_text(c, "Prompt list changed");
}

static void trigger_resource_update(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)args, (void)ctx;
    mcpaxle_server_notify_resource_updated(ud, "test://watched-resource");
    complete_text(c, "Resource updated");
}

static void add_change_triggers(mcpaxle_server *s) {
    add_tool(s, "test_trigger_tool_change", "Adds or removes a tool, firing tools/list_changed", NO_ARGS,
             trigger_tool_change, s);
    add_tool(s, "test_trigger_prompt_change", "Adds or removes a prompt, firing prompts/list_changed", NO_ARGS,
             trigger_prompt_change, s);
    add_tool(s, "test_trigger_resource_update", "Announces an update of test://watched-resource", NO_ARGS,
             trigger_resource_update, s);
}

/* ---- MRTR tools ------------------------------------------------------------------------- */
/* An ask returns MCPAXLE_OK with the answer, or a code to hand to mcpaxle_reply_propagate
 * (MCPAXLE_INPUT_REQUIRED ends the round; the callback runs again with the answers). */

static mcpaxle_result ask_elicit(mcpaxle_context *ctx, const char *key, const char *message, char **answer) {
    char *params = elicit_name(message);
    mcpaxle_result r = mcpaxle_context_elicit(ctx, key, params, answer);
    free(params);
    return r;
}

static mcpaxle_result ask_sample(mcpaxle_context *ctx, const char *key, const char *prompt, char **answer) {
    char *params = sampling(prompt);
    mcpaxle_result r = mcpaxle_context_sample(ctx, key, params, answer);
    free(params);
    return r;
}

static void missing_capability(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL;
    mcpaxle_result r = ask_sample(ctx, "summary", "Summarize: MCP", &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    char *said = get_string(answer, "/content/text", "");
    char *text = fmt("Sampled: %s", said);
    complete_text(c, text);
    free(text), free(said), mcpaxle_string_free(answer);
}

static void elicitation(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL;
    mcpaxle_result r = ask_elicit(ctx, "user_name", "What is your name?", &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    char *name = get_string(answer, "/content/name", "stranger");
    char *text = fmt("Hello, %s!", name);
    complete_text(c, text);
    free(text), free(name), mcpaxle_string_free(answer);
}

static void irr_sampling(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL;
    mcpaxle_result r = ask_sample(ctx, "capital_of_france", "What is the capital of France?", &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    char *said = get_string(answer, "/content/text", "");
    char *text = fmt("The model said: %s", said);
    complete_text(c, text);
    free(text), free(said), mcpaxle_string_free(answer);
}

static void irr_list_roots(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL;
    mcpaxle_result r = mcpaxle_context_list_roots(ctx, "roots", &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    size_t n = 0;
    mcpaxle_json_length(answer, "/roots", &n);
    char *text = fmt("The client has %zu root(s)", n);
    complete_text(c, text);
    free(text), mcpaxle_string_free(answer);
}

static void irr_request_state(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *state = NULL;
    mcpaxle_context_request_state(ctx, &state);
    if (!state) mcpaxle_context_set_request_state(ctx, "{\"started\":true}");
    mcpaxle_string_free(state);
    char *answer = NULL;
    mcpaxle_result r = ask_elicit(ctx, "user_name", "What is your name?", &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    mcpaxle_context_request_state(ctx, &state);
    char *name = get_string(answer, "/content/name", "stranger");
    char *text = fmt("Hello, %s (state %s)", name, state ? state : "null");
    complete_text(c, text);
    free(text), free(name), mcpaxle_string_free(answer), mcpaxle_string_free(state);
}

static void irr_multiple_inputs(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    /* Every ask is made before the round ends, so all three land in one InputRequiredResult. */
    char *name = NULL, *sample = NULL, *roots = NULL;
    mcpaxle_result r1 = ask_elicit(ctx, "user_name", "What is your name?", &name);
    mcpaxle_result r2 = ask_sample(ctx, "greeting", "Write a greeting", &sample);
    mcpaxle_result r3 = mcpaxle_context_list_roots(ctx, "roots", &roots);
    mcpaxle_result first = r1 != MCPAXLE_OK ? r1 : r2 != MCPAXLE_OK ? r2 : r3;
    if (first != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, first);
    } else {
        size_t n = 0;
        mcpaxle_json_length(roots, "/roots", &n);
        char *who = get_string(name, "/content/name", "stranger");
        char *text = fmt("Hello, %s; %zu root(s)", who, n);
        complete_text(c, text);
        free(text), free(who);
    }
    mcpaxle_string_free(name), mcpaxle_string_free(sample), mcpaxle_string_free(roots);
}

static void irr_multi_round(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *first = NULL, *second = NULL;
    mcpaxle_result r = ask_elicit(ctx, "step_1", "Round 1: what is your name?", &first);
    if (r == MCPAXLE_OK) r = ask_elicit(ctx, "step_2", "Round 2: what is your name again?", &second);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
    } else {
        char *a = get_string(first, "/content/name", "stranger"), *b = get_string(second, "/content/name", "stranger");
        char *text = fmt("Rounds done: %s and %s", a, b);
        complete_text(c, text);
        free(text), free(a), free(b);
    }
    mcpaxle_string_free(first), mcpaxle_string_free(second);
}

static void irr_capabilities(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL;
    mcpaxle_result r;
    if (mcpaxle_context_client_supports(ctx, "elicitation")) {
        r = ask_elicit(ctx, "user_name", "What is your name?", &answer);
        if (r == MCPAXLE_OK) {
            char *name = get_string(answer, "/content/name", "stranger");
            char *text = fmt("Hello, %s!", name);
            complete_text(c, text);
            free(text), free(name);
        }
    } else if (mcpaxle_context_client_supports(ctx, "sampling")) {
        r = ask_sample(ctx, "fallback", "Say hello", &answer);
        if (r == MCPAXLE_OK) complete_text(c, "Sampled a greeting");
    } else if (mcpaxle_context_client_supports(ctx, "roots")) {
        r = mcpaxle_context_list_roots(ctx, "roots", &answer);
        if (r == MCPAXLE_OK) complete_text(c, "Listed roots");
    } else {
        r = MCPAXLE_OK;
        mcpaxle_reply_error_data(c, MCPAXLE_ERR_MISSING_CAPABILITY,
                                      "This request requires the client capability elicitation, which the request's "
                                      "clientCapabilities do not declare",
                                      "{\"requiredCapabilities\":{\"elicitation\":{}}}");
    }
    if (r != MCPAXLE_OK) mcpaxle_reply_propagate(c, r);
    mcpaxle_string_free(answer);
}

static void add_mrtr_tools(mcpaxle_server *s) {
    add_tool(s, "test_missing_capability", "Needs the client's sampling capability", NO_ARGS, missing_capability, NULL);
    add_tool(s, "test_streaming_elicitation", "Asks for the user's name (MRTR elicitation)", NO_ARGS, elicitation, NULL);
    add_tool(s, "test_input_required_result_elicitation", "Asks for the user's name (MRTR elicitation)", NO_ARGS,
             elicitation, NULL);
    add_tool(s, "test_input_required_result_tampered_state", "Asks for the user's name (MRTR elicitation)", NO_ARGS,
             elicitation, NULL);
    add_tool(s, "test_input_required_result_sampling", "Asks the client to sample an LLM (MRTR)", NO_ARGS, irr_sampling,
             NULL);
    add_tool(s, "test_input_required_result_list_roots", "Asks the client for its roots (MRTR)", NO_ARGS, irr_list_roots,
             NULL);
    add_tool(s, "test_input_required_result_request_state", "MRTR with request state", NO_ARGS, irr_request_state, NULL);
    add_tool(s, "test_input_required_result_multiple_inputs", "Asks for elicitation, sampling and roots in one round",
             NO_ARGS, irr_multiple_inputs, NULL);
    add_tool(s, "test_input_required_result_multi_round", "Three rounds: two asks, then the result", NO_ARGS,
             irr_multi_round, NULL);
    add_tool(s, "test_input_required_result_capabilities", "Asks only for what the client supports", NO_ARGS,
             irr_capabilities, NULL);
}

/* ---- fixtures of the tasks-* scenarios (the Tasks extension, SEP-2663) ------------------- */
/* Plain handlers that run as tasks for a client declaring the extension: an ask blocks until
 * the client answers the task's input request with tasks/update, and tasks/cancel makes
 * mcpaxle_context_is_cancelled true. */

#define OPTIONAL_TASK "{\"taskSupport\":\"optional\"}"

static void greet(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *name = get_string(args, "/name", "World");
    char *text = fmt("Hello, %s!", name);
    complete_text(c, text);
    free(text), free(name);
}

/* Sleeps `ms` milliseconds, or until the call is cancelled; whether it was. */
static bool sleep_unless_cancelled(mcpaxle_context *ctx, double ms) {
    for (double slept = 0; slept < ms; slept += 10) {
        if (mcpaxle_context_is_cancelled(ctx)) return true;
        sleep_ms(10);
    }
    return mcpaxle_context_is_cancelled(ctx);
}

static void slow_compute(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud;
    char *raw = get_json(args, "/seconds"), *label = get_string(args, "/label", "result");
    double seconds = strcmp(raw, "null") == 0 ? 1.0 : strtod(raw, NULL);
    if (!(seconds >= 0)) seconds = 0;
    if (seconds > 3600) seconds = 3600;
    if (sleep_unless_cancelled(ctx, seconds * 1000)) {
        mcpaxle_reply_error(c, MCPAXLE_ERR_CANCELLED, "slow_compute was cancelled");
    } else {
        char *text = fmt("Computed %s after %s s", label, raw);
        complete_text(c, text);
        free(text);
    }
    free(raw), free(label);
}

static void failing_job(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    sleep_unless_cancelled(ctx, 1000);
    mcpaxle_reply_error(c, MCPAXLE_ERR_TOOL, "The job failed: the input could not be processed");
}

static void protocol_error_job(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    sleep_unless_cancelled(ctx, 100);
    /* A protocol error, not a tool error (which is an isError result): the task fails. */
    mcpaxle_reply_error(c, MCPAXLE_ERR_INVALID_PARAMS, "protocol_error_job: a deliberate protocol error, reported as a failed task");
}

static void confirm_delete(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud;
    char *file = get_string(args, "/filename", "the file"), *answer = NULL;
    char *message = fmt("Delete %s?", file), *q = quote(message);
    char *params = fmt("{\"mode\":\"form\",\"message\":%s,\"requestedSchema\":{\"type\":\"object\","
                       "\"properties\":{\"confirm\":{\"type\":\"boolean\"}}}}",
                       q);
    mcpaxle_result r = mcpaxle_context_elicit(ctx, "confirm", params, &answer);
    free(params), free(message), mcpaxle_string_free(q);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
    } else {
        char *action = get_string(answer, "/action", ""), *confirm = get_json(answer, "/content/confirm");
        bool yes = strcmp(action, "accept") == 0 && strcmp(confirm, "false") != 0;
        char *text = fmt(yes ? "Deleted %s" : "Kept %s", file);
        complete_text(c, text);
        free(text), free(action), free(confirm), mcpaxle_string_free(answer);
    }
    free(file);
}

/* One of multi_input's two asks, made on a thread of its own so that both wait at once. */
struct parallel_ask {
    mcpaxle_context *ctx;
    const char *key, *message;
    char *answer;
    mcpaxle_result result;
};

static void *ask_on_thread(void *arg) {
    struct parallel_ask *a = arg;
    a->result = ask_elicit(a->ctx, a->key, a->message, &a->answer);
    return NULL;
}

static void multi_input(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    struct parallel_ask asks[2] = {{ctx, "first", "First name?", NULL, MCPAXLE_OK},
                                   {ctx, "second", "Second?", NULL, MCPAXLE_OK}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, ask_on_thread, &asks[i]);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    if (asks[0].result != MCPAXLE_OK || asks[1].result != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, asks[0].result != MCPAXLE_OK ? asks[0].result : asks[1].result);
    } else {
        char *first = get_string(asks[0].answer, "/content/name", "stranger");
        char *second = get_string(asks[1].answer, "/content/name", "stranger");
        char *text = fmt("Got %s and %s", first, second);
        complete_text(c, text);
        free(text), free(first), free(second);
    }
    mcpaxle_string_free(asks[0].answer), mcpaxle_string_free(asks[1].answer);
}

/* deferTask: the ask is an MRTR round of the tools/call; then the call becomes a task. */
static void tool_with_task(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL;
    mcpaxle_result r = ask_elicit(ctx, "user_name", "What is your name?", &answer);
    if (r == MCPAXLE_OK) r = mcpaxle_context_start_task(ctx, NULL);
    if (r != MCPAXLE_OK) {
        mcpaxle_string_free(answer);
        mcpaxle_reply_propagate(c, r);
        return;
    }
    sleep_unless_cancelled(ctx, 200);
    char *name = get_string(answer, "/content/name", "stranger");
    char *text = fmt("Hello, %s!", name);
    complete_text(c, text);
    free(text), free(name), mcpaxle_string_free(answer);
}

static void add_task_tools(mcpaxle_server *s) {
    add_tool(s, "greet", "Greets by name (never a task)", "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}",
             greet, NULL);
    add_tool_with(s, "slow_compute", "Sleeps `seconds` seconds, then answers (a task when the client can)",
                  "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"number\",\"minimum\":0},"
                  "\"label\":{\"type\":\"string\"}}}",
                  OPTIONAL_TASK, slow_compute, NULL);
    add_tool_with(s, "failing_job", "Fails with a tool error after a second (only as a task)", NO_ARGS,
                  "{\"taskSupport\":\"required\"}", failing_job, NULL);
    add_tool_with(s, "protocol_error_job", "Fails with a JSON-RPC error: the task fails", NO_ARGS, OPTIONAL_TASK,
                  protocol_error_job, NULL);
    add_tool_with(s, "confirm_delete", "Asks the user to confirm, then deletes (pretends to)",
                  "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":\"string\"}}}", OPTIONAL_TASK,
                  confirm_delete, NULL);
    add_tool_with(s, "multi_input", "Asks two questions at once", NO_ARGS, OPTIONAL_TASK, multi_input, NULL);
    add_tool_with(s, "test_tool_with_task", "Asks for a name (MRTR), then greets as a task", NO_ARGS,
                  "{\"taskSupport\":\"required\",\"deferTask\":true}", tool_with_task, NULL);
}

/* ---- fixtures of the 2025-11-25 suite: real requests to the client under a legacy session -- */

static void legacy_sampling(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud;
    char *prompt = get_string(args, "/prompt", ""), *answer = NULL;
    mcpaxle_result r = ask_sample(ctx, "sampling", prompt, &answer);
    free(prompt);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    char *said = get_string(answer, "/content/text", "");
    char *text = fmt("LLM response: %s", said);
    complete_text(c, text);
    free(text), free(said), mcpaxle_string_free(answer);
}

/* Asks with `params`, then answers "<prefix>action=..., content=...". */
static void elicit_and_report(mcpaxle_context *ctx, mcpaxle_reply *c, const char *key, const char *params,
                              const char *prefix) {
    char *answer = NULL;
    mcpaxle_result r = mcpaxle_context_elicit(ctx, key, params, &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    char *action = get_string(answer, "/action", ""), *content = get_json(answer, "/content");
    char *text = fmt("%saction=%s, content=%s", prefix, action, content);
    complete_text(c, text);
    free(text), free(action), free(content), mcpaxle_string_free(answer);
}

static void legacy_elicitation(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud;
    char *message = get_string(args, "/message", "");
    char *q = quote(message);
    char *params = fmt("{\"message\":%s,\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
                       "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
                       "\"email\":{\"type\":\"string\",\"description\":\"User's email address\"}},"
                       "\"required\":[\"username\",\"email\"]}}",
                       q);
    elicit_and_report(ctx, c, "elicitation", params, "User response: ");
    free(params), mcpaxle_string_free(q), free(message);
}

static void elicitation_defaults(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    elicit_and_report(ctx, c, "defaults",
                      "{\"message\":\"Please review and update the form fields with defaults\","
                      "\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
                      "\"name\":{\"type\":\"string\",\"description\":\"User name\",\"default\":\"John Doe\"},"
                      "\"age\":{\"type\":\"integer\",\"description\":\"User age\",\"default\":30},"
                      "\"score\":{\"type\":\"number\",\"description\":\"User score\",\"default\":95.5},"
                      "\"status\":{\"type\":\"string\",\"description\":\"User status\","
                      "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
                      "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification status\",\"default\":true}}}}",
                      "Elicitation completed: ");
}

static void elicitation_enums(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    elicit_and_report(
        ctx, c, "enums",
        "{\"message\":\"Please select options from the enum fields\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
        "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Untitled single-select\","
        "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
        "\"titledSingle\":{\"type\":\"string\",\"description\":\"Titled single-select\",\"oneOf\":["
        "{\"const\":\"value1\",\"title\":\"First Option\"},{\"const\":\"value2\",\"title\":\"Second Option\"},"
        "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
        "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Legacy titled enum\",\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
        "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
        "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Untitled multi-select\","
        "\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
        "\"titledMulti\":{\"type\":\"array\",\"description\":\"Titled multi-select\",\"items\":{\"anyOf\":["
        "{\"const\":\"value1\",\"title\":\"First Choice\"},{\"const\":\"value2\",\"title\":\"Second Choice\"},"
        "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}}}}",
        "Elicitation completed: ");
}

static void add_legacy_fixtures(mcpaxle_server *s) {
    add_tool(s, "test_sampling", "Asks the client's LLM to answer a prompt",
             "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\"}},\"required\":[\"prompt\"]}",
             legacy_sampling, NULL);
    add_tool(s, "test_elicitation", "Asks the user for a username and email",
             "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"}},\"required\":[\"message\"]}",
             legacy_elicitation, NULL);
    add_tool(s, "test_elicitation_sep1034_defaults", "Elicitation with defaults for every primitive type", NO_ARGS,
             elicitation_defaults, NULL);
    add_tool(s, "test_elicitation_sep1330_enums", "Elicitation with the five enum schema variants", NO_ARGS,
             elicitation_enums, NULL);
}

/* ---- prompts ---------------------------------------------------------------------------- */

static void complete_user_text(mcpaxle_reply *c, const char *text) {
    char *q = quote(text);
    char *json = fmt("{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":%s}}]}", q);
    complete_json(c, json);
    free(json), mcpaxle_string_free(q);
}

static void simple_prompt(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_user_text(c, "This is a simple prompt for testing.");
}

static void prompt_with_arguments(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *a1 = get_string(args, "/arg1", ""), *a2 = get_string(args, "/arg2", "");
    char *text = fmt("Prompt with arguments: arg1='%s', arg2='%s'", a1, a2);
    complete_user_text(c, text);
    free(text), free(a1), free(a2);
}

static void complete_arguments(void *ud, const char *request, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    static const char *options[] = {"test", "testing", "tested", "value", "paris", "park"};
    char *typed = get_string(request, "/value", "");
    char values[256] = "";
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        if (strncmp(options[i], typed, strlen(typed)) != 0) continue;
        if (values[0]) strcat(values, ",");
        strcat(values, "\"");
        strcat(values, options[i]);
        strcat(values, "\"");
    }
    char *json = fmt("{\"completion\":{\"values\":[%s]}}", values);
    complete_json(c, json);
    free(json), free(typed);
}

static void prompt_with_embedded_resource(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *uri = get_string(args, "/resourceUri", "test://example-resource");
    char *q = quote(uri);
    char *json = fmt("{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":{\"uri\":%s,"
                     "\"mimeType\":\"text/plain\",\"text\":\"Embedded resource content for testing.\"}}},"
                     "{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Please process the embedded resource above.\"}}]}",
                     q);
    complete_json(c, json);
    free(json), mcpaxle_string_free(q), free(uri);
}

static void prompt_with_image(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args, (void)ctx;
    complete_json(c, "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"image\",\"data\":\"" PNG "\","
                     "\"mimeType\":\"image/png\"}},{\"role\":\"user\",\"content\":{\"type\":\"text\","
                     "\"text\":\"Please analyze the image above.\"}}]}");
}

static void irr_prompt(void *ud, const char *args, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)args;
    char *answer = NULL;
    mcpaxle_result r = ask_elicit(ctx, "user_name", "Who is this prompt for?", &answer);
    if (r != MCPAXLE_OK) {
        mcpaxle_reply_propagate(c, r);
        return;
    }
    char *name = get_string(answer, "/content/name", "stranger");
    char *text = fmt("Write a short poem for %s.", name);
    complete_user_text(c, text);
    free(text), free(name), mcpaxle_string_free(answer);
}

static void add_prompts(mcpaxle_server *s) {
    check("test_simple_prompt",
          mcpaxle_server_add_prompt(s, "{\"name\":\"test_simple_prompt\",\"description\":\"A simple prompt without arguments\"}",
                                    simple_prompt, NULL));
    check("test_prompt_with_arguments",
          mcpaxle_server_add_prompt(s,
                                    "{\"name\":\"test_prompt_with_arguments\",\"description\":\"A prompt with two arguments\","
                                    "\"arguments\":[{\"name\":\"arg1\",\"description\":\"First test argument\",\"required\":true},"
                                    "{\"name\":\"arg2\",\"description\":\"Second test argument\",\"required\":true}]}",
                                    prompt_with_arguments, NULL));
    check("completion", mcpaxle_server_set_completion(s, "{\"type\":\"ref/prompt\",\"name\":\"test_prompt_with_arguments\"}",
                                                      complete_arguments, NULL));
    check("test_prompt_with_embedded_resource",
          mcpaxle_server_add_prompt(s,
                                    "{\"name\":\"test_prompt_with_embedded_resource\",\"description\":\"A prompt with an "
                                    "embedded resource\",\"arguments\":[{\"name\":\"resourceUri\",\"description\":\"URI of "
                                    "the resource\",\"required\":true}]}",
                                    prompt_with_embedded_resource, NULL));
    check("test_prompt_with_image",
          mcpaxle_server_add_prompt(s, "{\"name\":\"test_prompt_with_image\",\"description\":\"A prompt with an image\"}",
                                    prompt_with_image, NULL));
    check("test_input_required_result_prompt",
          mcpaxle_server_add_prompt(s,
                                    "{\"name\":\"test_input_required_result_prompt\",\"description\":\"Asks for the user's "
                                    "name first (MRTR)\"}",
                                    irr_prompt, NULL));
}

/* ---- resources -------------------------------------------------------------------------- */

/* user_data: a static struct telling what to return. */
struct contents {
    const char *mime;
    const char *field; /* "text" or "blob" */
    const char *value;
};

static void read_static(void *ud, const char *request, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ctx;
    const struct contents *what = ud;
    char *uri = get_string(request, "/uri", ""), *qu = quote(uri), *qv = quote(what->value);
    char *json = fmt("{\"contents\":[{\"uri\":%s,\"mimeType\":\"%s\",\"%s\":%s}]}", qu, what->mime, what->field, qv);
    complete_json(c, json);
    free(json), mcpaxle_string_free(qu), mcpaxle_string_free(qv), free(uri);
}

static void read_template(void *ud, const char *request, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)ctx;
    char *uri = get_string(request, "/uri", ""), *id = get_string(request, "/variables/id", "");
    char *qid = quote(id);
    char *data = fmt("Data for ID: %s", id);
    char *qdata = quote(data);
    char *body = fmt("{\"id\":%s,\"templateTest\":true,\"data\":%s}", qid, qdata);
    char *qu = quote(uri), *qb = quote(body);
    char *json = fmt("{\"contents\":[{\"uri\":%s,\"mimeType\":\"application/json\",\"text\":%s}]}", qu, qb);
    complete_json(c, json);
    free(json), free(body), free(data), free(uri), free(id);
    mcpaxle_string_free(qid), mcpaxle_string_free(qdata), mcpaxle_string_free(qu), mcpaxle_string_free(qb);
}

static const struct contents STATIC_TEXT = {"text/plain", "text", "This is the content of the static text resource."};
static const struct contents STATIC_BINARY = {"image/png", "blob", PNG};
static const struct contents WATCHED = {"text/plain", "text", "Watched resource content"};

static void add_resources(mcpaxle_server *s) {
    check("test://static-text",
          mcpaxle_server_add_resource(s,
                                      "{\"uri\":\"test://static-text\",\"name\":\"Static text resource\",\"mimeType\":\"text/plain\","
                                      "\"description\":\"A static text resource\"}",
                                      NULL, read_static, (void *)&STATIC_TEXT));
    check("test://static-binary",
          mcpaxle_server_add_resource(s,
                                      "{\"uri\":\"test://static-binary\",\"name\":\"Static binary resource\",\"mimeType\":\"image/png\","
                                      "\"description\":\"A static binary resource\"}",
                                      NULL, read_static, (void *)&STATIC_BINARY));
    check("test://watched-resource",
          mcpaxle_server_add_resource(s,
                                      "{\"uri\":\"test://watched-resource\",\"name\":\"Watched resource\",\"mimeType\":\"text/plain\","
                                      "\"description\":\"Subscribe to it, then call test_trigger_resource_update\"}",
                                      NULL, read_static, (void *)&WATCHED));
    check("test://template/{id}/data",
          mcpaxle_server_add_resource_template(s,
                                               "{\"uriTemplate\":\"test://template/{id}/data\",\"name\":\"Template resource\","
                                               "\"mimeType\":\"application/json\",\"description\":\"Data for an id\"}",
                                               NULL, read_template, NULL));
}

/* ---- main ------------------------------------------------------------------------------- */

static mcpaxle_server *build(void) {
    mcpaxle_server *s = NULL;
    check("mcpaxle_server_new",
          mcpaxle_server_new("mcpaxle-everything-server", mcpaxle_version(),
                             "{\"title\":\"mcpaxle everything server (C)\",\"instructions\":\"A server with every fixture "
                             "of the MCP conformance suite.\",\"enable\":[\"logging\"]}",
                             &s));
    add_content_tools(s);
    add_change_triggers(s);
    add_mrtr_tools(s);
    add_task_tools(s);
    add_legacy_fixtures(s);
    add_prompts(s);
    add_resources(s);
    return s;
}

/* examples/mhd_server.c includes this file for its fixtures, with its own main. */
#ifndef MCPAXLE_EVERYTHING_NO_MAIN
static int usage(void) {
    fprintf(stderr, "usage: everything_server --http HOST:PORT | --stdio\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--stdio") == 0) {
        mcpaxle_server *s = build();
        mcpaxle_result r = mcpaxle_server_serve_stdio(s, NULL);
        mcpaxle_server_free(s);
        if (r != MCPAXLE_OK) die("serve_stdio", r);
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "--http") != 0) return usage();

    /* SIGINT and SIGTERM are blocked in every thread (the runtime's threads inherit the mask)
     * and taken by sigwait below, so that the server stops cleanly. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

    mcpaxle_server *s = build();
    mcpaxle_http_server *http = NULL;
    check("mcpaxle_http_server_start", mcpaxle_http_server_start(s, argv[2], NULL, &http));
    uint16_t port = 0;
    mcpaxle_http_server_port(http, &port);
    fprintf(stderr, "everything_server: listening on http://%s/mcp (port %u)\n", argv[2], (unsigned)port);

    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr, "everything_server: signal %d, stopping\n", sig);
    mcpaxle_http_server_stop(http);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
    return 0;
}
#endif

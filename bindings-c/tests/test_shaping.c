/*
 * What a C handler's result becomes: the shorthand cases of tests/shaping_cases.json (shared
 * with the core, Python and Node) served by C handlers and read back, and the server's policy
 * for an unexpected failure (maskErrorDetails).
 */
#include "harness.h"

#include <libgen.h>

/* The case's value (JSON text): the handler completes with it as it is. */
static void returns(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)req, (void)ctx;
    mcpaxle_reply_ok(c, (const char *)ud);
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = calloc((size_t)n + 1, 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

static char *get(const char *json, const char *pointer) {
    char *v = NULL, *copy = NULL;
    if (mcpaxle_json_get(json, pointer, &v) == MCPAXLE_OK && v) copy = strdup(v);
    mcpaxle_string_free(v);
    return copy;
}

static char *get_string(const char *json, const char *pointer) {
    char *v = NULL, *copy = NULL;
    if (mcpaxle_json_get_string(json, pointer, &v) == MCPAXLE_OK && v) copy = strdup(v);
    mcpaxle_string_free(v);
    return copy;
}

static size_t length(const char *json, const char *pointer) {
    size_t n = 0;
    if (mcpaxle_json_length(json, pointer, &n) != MCPAXLE_OK) return 0;
    return n;
}

static int stripped(const char *key) {
    return !strcmp(key, "resultType") || !strcmp(key, "_meta") || !strcmp(key, "ttlMs") || !strcmp(key, "cacheScope");
}

/* Whether `result` (a result object) equals `expected` once the stripped members are left out. */
static int same_result(const char *result, const char *expected, const char *name) {
    int same = 1;
    char *keys = NULL;
    mcpaxle_json_keys(result, "", &keys);
    size_t n = length(keys, "");
    for (size_t i = 0; i < n; i++) {
        char *p = fmt("/%zu", i), *key = get_string(keys, p), *kp = fmt("/%s", key);
        if (!stripped(key)) {
            char *got = get(result, kp), *want = get(expected, kp);
            if (!want || strcmp(got, want) != 0) {
                fprintf(stderr, "  %s: %s is %s, expected %s\n", name, key, got, want ? want : "(absent)");
                same = 0;
            }
            free(got), free(want);
        }
        free(p), free(key), free(kp);
    }
    mcpaxle_string_free(keys);
    /* Every expected member was compared above unless the result lacks one. */
    char *want_keys = NULL;
    mcpaxle_json_keys(expected, "", &want_keys);
    size_t m = length(want_keys, "");
    for (size_t i = 0; i < m; i++) {
        char *p = fmt("/%zu", i), *key = get_string(want_keys, p), *kp = fmt("/%s", key), *got = get(result, kp);
        if (!got) {
            fprintf(stderr, "  %s: %s is missing\n", name, key);
            same = 0;
        }
        free(p), free(key), free(kp), free(got);
    }
    mcpaxle_string_free(want_keys);
    return same;
}

TEST(every_shared_case_without_bytes_gives_the_same_result_as_in_the_core) {
    char *dir = strdup(__FILE__), *path = fmt("%s/../../tests/shaping_cases.json", dirname(dir));
    char *doc = read_file(path);
    CHECK(doc != NULL);
    size_t n = doc ? length(doc, "/cases") : 0, ran = 0, with_bytes = 0;
    CHECK(n >= 20);
    for (size_t i = 0; i < n; i++) {
        char *at = fmt("/cases/%zu", i), *p;
        p = fmt("%s/returned/json", at);
        char *value = get(doc, p);
        free(p);
        if (!value) {
            with_bytes++; /* C has no bytes type: a C handler returns JSON only */
            free(at);
            continue;
        }
        p = fmt("%s/kind", at);
        char *kind = get_string(doc, p), *name = (free(p), p = fmt("%s/name", at), get_string(doc, p));
        free(p);
        p = fmt("%s/expected", at);
        char *expected = get(doc, p);
        free(p);
        mcpaxle_server *s = new_server(NULL);
        char *method = NULL, *params = NULL, *header = NULL;
        if (!strcmp(kind, "tool")) {
            p = fmt("%s/outputSchema", at);
            char *schema = get(doc, p), *def = schema ? fmt("{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"},\"outputSchema\":%s}", schema) : fmt("{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}}");
            CHECK_RC(mcpaxle_server_add_tool(s, def, returns, value), MCPAXLE_OK);
            method = "tools/call", header = "t", params = fmt("\"name\":\"t\"");
            free(p), free(schema), free(def);
        } else if (!strcmp(kind, "resource")) {
            p = fmt("%s/uri", at);
            char *uri = get(doc, p), *mp = fmt("%s/mimeType", at), *mime = get(doc, mp);
            char *def = mime ? fmt("{\"uri\":%s,\"name\":\"r\",\"mimeType\":%s}", uri, mime) : fmt("{\"uri\":%s,\"name\":\"r\"}", uri);
            CHECK_RC(mcpaxle_server_add_resource(s, def, NULL, returns, value), MCPAXLE_OK);
            method = "resources/read", params = fmt("\"uri\":%s", uri);
            header = get_string(doc, p);
            free(p), free(uri), free(mp), free(mime), free(def);
        } else if (!strcmp(kind, "prompt")) {
            CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\"}", returns, value), MCPAXLE_OK);
            method = "prompts/get", header = "p", params = fmt("\"name\":\"p\"");
        } else {
            CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\",\"arguments\":[{\"name\":\"a\"}]}", returns, "\"x\""), MCPAXLE_OK);
            CHECK_RC(mcpaxle_server_set_completion(s, "{\"type\":\"ref/prompt\",\"name\":\"p\"}", returns, value), MCPAXLE_OK);
            method = "completion/complete";
            params = fmt("\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}");
        }
        uint16_t port = 0;
        mcpaxle_http_server *http = start_http(s, &port);
        char *body = mcp(port, method, header, params, NULL), *json = response_json(body);
        char *result = json ? get(json, "/result") : NULL;
        CHECK(result != NULL);
        if (result && !same_result(result, expected, name)) {
            current_failures++;
            fprintf(stderr, "  FAIL case \"%s\": got %s\n", name, result);
        }
        ran++;
        mcpaxle_http_server_stop(http);
        mcpaxle_http_server_free(http);
        mcpaxle_server_free(s);
        if (!strcmp(kind, "resource")) free(header);
        free(body), free(json), free(result), free(params), free(expected), free(kind), free(name), free(value), free(at);
    }
    printf("  %zu cases run; %zu return bytes, which a C handler cannot (C results are JSON)\n", ran, with_bytes);
    CHECK(ran + with_bytes == n && ran >= 20);
    free(doc), free(path), free(dir);
}

static void fails_internally(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)req, (void)ctx;
    mcpaxle_reply_error(c, MCPAXLE_ERR_INTERNAL, "the file is missing");
}

static void refuses(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)ud, (void)req, (void)ctx;
    mcpaxle_reply_error(c, MCPAXLE_ERR_TOOL, "no such city");
}

TEST(an_internal_failure_shows_its_message_unless_masked) {
    for (int mask = 0; mask < 2; mask++) {
        mcpaxle_server *s = new_server(mask ? "{\"maskErrorDetails\":true}" : "{\"maskErrorDetails\":false}");
        CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"broken\",\"inputSchema\":{\"type\":\"object\"}}", fails_internally, NULL), MCPAXLE_OK);
        CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"refuses\",\"inputSchema\":{\"type\":\"object\"}}", refuses, NULL), MCPAXLE_OK);
        CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\"}", fails_internally, NULL), MCPAXLE_OK);
        uint16_t port = 0;
        mcpaxle_http_server *http = start_http(s, &port);
        char *body = mcp(port, "tools/call", "broken", "\"name\":\"broken\"", NULL);
        CHECK_JSON(body, "/result/isError", "true");
        CHECK_JSON(body, "/result/content/0/text", mask ? "Internal error in tool \"broken\"" : "the file is missing");
        free(body);
        body = mcp(port, "tools/call", "refuses", "\"name\":\"refuses\"", NULL);
        CHECK_JSON(body, "/result/content/0/text", "no such city");
        free(body);
        body = mcp(port, "prompts/get", "p", "\"name\":\"p\"", NULL);
        CHECK_JSON(body, "/error/code", "-32603");
        CHECK_JSON(body, "/error/message", mask ? "Internal error in prompt \"p\"" : "the file is missing");
        free(body);
        mcpaxle_http_server_stop(http);
        mcpaxle_http_server_free(http);
        mcpaxle_server_free(s);
    }
    mcpaxle_server *s = NULL;
    CHECK_RC(mcpaxle_server_new("n", "1", "{\"maskErrorDetails\":\"yes\"}", &s), MCPAXLE_ERR_INVALID_PARAMS);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    RUN(every_shared_case_without_bytes_gives_the_same_result_as_in_the_core);
    RUN(an_internal_failure_shows_its_message_unless_masked);
    return summary();
}

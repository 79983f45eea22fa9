/*
 * What a C handler's result becomes: the shorthand cases of tests/shaping_cases.json (shared
 * with the core, Python and Node) served by C handlers and read back (JSON with
 * mcpaxle_reply_ok, bytes with mcpaxle_reply_bytes), and the server's policy for an unexpected
 * failure (maskErrorDetails).
 */
#include "harness.h"

#include <libgen.h>

/* The case's value (JSON text): the handler completes with it as it is. */
static void returns(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)req, (void)ctx;
    mcpaxle_reply_ok(c, (const char *)ud);
}

struct bytes {
    uint8_t *data;
    size_t len;
};

/* The case's bytes: the handler completes with them as they are. */
static void returns_bytes(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)req, (void)ctx;
    const struct bytes *b = ud;
    mcpaxle_reply_bytes(c, b->data, b->len);
}

/* Decodes base64 (the cases' form of bytes); NULL when it is not base64. */
static uint8_t *base64_decode(const char *text, size_t *len) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(text);
    uint8_t *out = malloc(n / 4 * 3 + 1);
    uint32_t acc = 0;
    int bits = 0;
    *len = 0;
    for (size_t i = 0; i < n && text[i] != '='; i++) {
        const char *at = strchr(alphabet, text[i]);
        if (!at || !*at) {
            free(out);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)(at - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[(*len)++] = (uint8_t)(acc >> bits);
        }
    }
    return out;
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

TEST(every_shared_case_of_json_or_bytes_gives_the_same_result_as_in_the_core) {
    char *dir = strdup(__FILE__), *path = fmt("%s/../../tests/shaping_cases.json", dirname(dir));
    char *doc = read_file(path);
    CHECK(doc != NULL);
    size_t n = doc ? length(doc, "/cases") : 0, ran = 0, ran_bytes = 0, mixed = 0;
    CHECK(n >= 20);
    for (size_t i = 0; i < n; i++) {
        char *at = fmt("/cases/%zu", i), *p;
        p = fmt("%s/returned/json", at);
        char *value = get(doc, p);
        free(p);
        p = fmt("%s/returned/bytes", at);
        char *base64 = value ? NULL : get_string(doc, p);
        free(p);
        struct bytes b = {0};
        if (base64) {
            b.data = base64_decode(base64, &b.len);
            CHECK(b.data != NULL);
            free(base64);
        }
        if (!value && !b.data) {
            mixed++; /* JSON with bytes inside: a C handler replies JSON or bytes, not a mix */
            free(at);
            continue;
        }
        mcpaxle_handler handler = value ? returns : returns_bytes;
        void *ud = value ? (void *)value : (void *)&b;
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
            CHECK_RC(mcpaxle_server_add_tool(s, def, handler, ud), MCPAXLE_OK);
            method = "tools/call", header = "t", params = fmt("\"name\":\"t\"");
            free(p), free(schema), free(def);
        } else if (!strcmp(kind, "resource")) {
            p = fmt("%s/uri", at);
            char *uri = get(doc, p), *mp = fmt("%s/mimeType", at), *mime = get(doc, mp);
            char *def = mime ? fmt("{\"uri\":%s,\"name\":\"r\",\"mimeType\":%s}", uri, mime) : fmt("{\"uri\":%s,\"name\":\"r\"}", uri);
            CHECK_RC(mcpaxle_server_add_resource(s, def, NULL, handler, ud), MCPAXLE_OK);
            method = "resources/read", params = fmt("\"uri\":%s", uri);
            header = get_string(doc, p);
            free(p), free(uri), free(mp), free(mime), free(def);
        } else if (!strcmp(kind, "prompt")) {
            CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\"}", handler, ud), MCPAXLE_OK);
            method = "prompts/get", header = "p", params = fmt("\"name\":\"p\"");
        } else {
            CHECK_RC(mcpaxle_server_add_prompt(s, "{\"name\":\"p\",\"arguments\":[{\"name\":\"a\"}]}", returns, "\"x\""), MCPAXLE_OK);
            CHECK_RC(mcpaxle_server_set_completion(s, "{\"type\":\"ref/prompt\",\"name\":\"p\"}", handler, ud), MCPAXLE_OK);
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
        if (b.data) ran_bytes++;
        mcpaxle_http_server_stop(http);
        mcpaxle_http_server_free(http);
        mcpaxle_server_free(s);
        if (!strcmp(kind, "resource")) free(header);
        free(body), free(json), free(result), free(params), free(expected), free(kind), free(name), free(value), free(at);
        free(b.data);
    }
    printf("  %zu cases run (%zu of bytes); %zu hold bytes inside JSON, which a C reply cannot\n", ran, ran_bytes, mixed);
    CHECK(ran + mixed == n && ran >= 20 && ran_bytes >= 3);
    free(doc), free(path), free(dir);
}

static mcpaxle_result bytes_codes[3];

/* Bytes that hold NUL bytes, then bad input: a NULL `data` with a length, a second reply. */
static void bytes_modes(void *ud, const char *req, mcpaxle_context *ctx, mcpaxle_reply *c) {
    (void)req, (void)ctx;
    const char *mode = ud;
    if (!strcmp(mode, "nul")) {
        bytes_codes[0] = mcpaxle_reply_bytes(c, (const uint8_t *)"\0\1", 2);
        bytes_codes[1] = mcpaxle_reply_bytes(c, (const uint8_t *)"\0\1", 2);
    } else if (!strcmp(mode, "empty")) {
        bytes_codes[0] = mcpaxle_reply_bytes(c, NULL, 0);
    } else {
        bytes_codes[0] = mcpaxle_reply_bytes(c, NULL, 5);
    }
}

TEST(bytes_with_bad_input) {
    mcpaxle_server *s = new_server(NULL);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"nul\",\"inputSchema\":{\"type\":\"object\"}}", bytes_modes, "nul"), MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_resource(s, "{\"uri\":\"test://empty\",\"name\":\"e\",\"mimeType\":\"image/png\"}", NULL, bytes_modes, "empty"),
             MCPAXLE_OK);
    CHECK_RC(mcpaxle_server_add_tool(s, "{\"name\":\"null\",\"inputSchema\":{\"type\":\"object\"}}", bytes_modes, "null"), MCPAXLE_OK);
    uint16_t port = 0;
    mcpaxle_http_server *http = start_http(s, &port);

    char *body = mcp(port, "tools/call", "nul", "\"name\":\"nul\"", NULL);
    CHECK_JSON(body, "/result/content/0/resource/blob", "AAE=");
    CHECK_JSON(body, "/result/content/0/resource/mimeType", "application/octet-stream");
    CHECK_RC(bytes_codes[0], MCPAXLE_OK);
    CHECK_RC(bytes_codes[1], MCPAXLE_ERR_ALREADY_REPLIED);
    free(body);

    body = mcp(port, "resources/read", "test://empty", "\"uri\":\"test://empty\"", NULL);
    CHECK_JSON(body, "/result/contents/0/uri", "test://empty");
    CHECK_JSON(body, "/result/contents/0/mimeType", "image/png");
    CHECK_JSON(body, "/result/contents/0/blob", "");
    CHECK_RC(bytes_codes[0], MCPAXLE_OK);
    free(body);

    /* The call still ends (never hangs), as an internal failure. */
    body = mcp(port, "tools/call", "null", "\"name\":\"null\"", NULL);
    CHECK(body && (strstr(body, "\"isError\":true") || strstr(body, "-32603")));
    CHECK_RC(bytes_codes[0], MCPAXLE_ERR_NULL);
    free(body);
    CHECK_RC(mcpaxle_reply_bytes(NULL, (const uint8_t *)"x", 1), MCPAXLE_ERR_NULL);

    mcpaxle_http_server_stop(http);
    mcpaxle_http_server_free(http);
    mcpaxle_server_free(s);
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
    CHECK_RC(mcpaxle_server_new("n", "1", "{\"maskErrorDetails\":\"yes\"}", &s), MCPAXLE_ERR_USAGE);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    RUN(every_shared_case_of_json_or_bytes_gives_the_same_result_as_in_the_core);
    RUN(bytes_with_bad_input);
    RUN(an_internal_failure_shows_its_message_unless_masked);
    return summary();
}

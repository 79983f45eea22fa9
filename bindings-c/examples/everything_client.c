/*
 * The "everything" client in C: what the official MCP conformance suite's client scenarios ask
 * of a client, on top of include/mcpaxle.h. A port of core/examples/everything_client.rs.
 *
 *   MCP_CONFORMANCE_SCENARIO=tools_call MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 \
 *       everything_client http://localhost:3000/mcp
 *
 * The server URL is the last argument. MCP_CONFORMANCE_PROTOCOL_VERSION picks the wire;
 * MCP_CONFORMANCE_CONTEXT carries a scenario's test data (toolCalls, pre-registered
 * client_id/client_secret/issuer).
 *
 * OAuth is on for every scenario (it only acts on a 401): the suite's authorization servers
 * approve without a user, so there is no authorization callback (NULL: the client follows the
 * authorization server's redirect itself); the client offers a Client ID Metadata Document URL
 * and falls back to dynamic registration.
 *
 * Build: cc everything_client.c $(pkg-config --cflags --libs mcpaxle) -o everything_client
 */
#define _GNU_SOURCE
#include <mcpaxle.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *fmt(const char *format, ...) {
    va_list ap;
    char *s = NULL;
    va_start(ap, format);
    if (vasprintf(&s, format, ap) < 0) s = NULL;
    va_end(ap);
    if (!s) abort();
    return s;
}

/* Where the suite's authorization servers send the user-agent back (never listened on: the
 * redirect is read, not followed), and the metadata document URL it expects (never fetched). */
#define REDIRECT_URI "http://localhost:3000/callback"
#define CLIENT_METADATA_URL "https://conformance-test.local/client-metadata.json"

static int fail(const char *what, mcpaxle_result r) {
    fprintf(stderr, "everything_client: %s: %s: %s\n", what, mcpaxle_result_name(r), mcpaxle_last_error_message());
    return 1;
}

/* The JSON text at `pointer`, or NULL (free with mcpaxle_string_free). */
static char *get(const char *json, const char *pointer) {
    char *v = NULL;
    mcpaxle_json_get(json, pointer, &v);
    return v;
}

static char *get_string(const char *json, const char *pointer) {
    char *v = NULL;
    mcpaxle_json_get_string(json, pointer, &v);
    return v;
}

static size_t length(const char *json, const char *pointer) {
    size_t n = 0;
    mcpaxle_json_length(json, pointer, &n);
    return n;
}

/* A plausible value (JSON text) for a property of a JSON Schema, by its declared type. */
static char *sample_value(const char *name, const char *schema) {
    char *v = schema ? get(schema, "/default") : NULL;
    if (!v && schema) v = get(schema, "/enum/0");
    if (v) return v;
    char *type = schema ? get_string(schema, "/type") : NULL;
    if (type && type[0] == '[') { /* a list of types: the first */
        mcpaxle_string_free(type);
        type = get_string(schema, "/type/0");
    }
    const char *t = type ? type : "";
    const char *out = strcmp(t, "integer") == 0   ? "1"
                      : strcmp(t, "number") == 0  ? "1.5"
                      : strcmp(t, "boolean") == 0 ? "true"
                      : strcmp(t, "object") == 0  ? "{}"
                      : strcmp(t, "array") == 0   ? "[]"
                      : strcmp(t, "null") == 0    ? "null"
                      : strstr(name, "region")    ? "\"us-east1\""
                                                  : "\"test\"";
    mcpaxle_string_free(type);
    char *copy = NULL;
    mcpaxle_json_get(out, "", &copy);
    return copy;
}

/* Arguments for a tool (`tool` a Tool's JSON): every required property, with a plausible value. */
static char *sample_arguments(const char *tool) {
    char *args = strdup("{");
    size_t n = length(tool, "/inputSchema/required");
    for (size_t i = 0; i < n; i++) {
        char *ptr = fmt("/inputSchema/required/%zu", i);
        char *name = get_string(tool, ptr);
        char *prop_ptr = fmt("/inputSchema/properties/%s", name ? name : "");
        char *prop = get(tool, prop_ptr);
        char *value = sample_value(name ? name : "", prop);
        char *q = NULL;
        mcpaxle_json_quote(name ? name : "", &q);
        char *next = fmt("%s%s%s:%s", args, i ? "," : "", q, value);
        free(args);
        args = next;
        mcpaxle_string_free(q), mcpaxle_string_free(value), mcpaxle_string_free(prop), free(prop_ptr);
        mcpaxle_string_free(name), free(ptr);
    }
    char *done = fmt("%s}", args);
    free(args);
    return done;
}

/* Accepts an elicitation, with the schema's defaults (SEP-1034) and a plausible value for the
 * other required fields. */
static void on_elicitation(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud;
    char *mode = get_string(params, "/mode");
    if (mode && strcmp(mode, "url") == 0) {
        mcpaxle_reply_ok(c, "{\"action\":\"accept\"}");
        mcpaxle_string_free(mode);
        return;
    }
    mcpaxle_string_free(mode);
    char *schema = get(params, "/requestedSchema");
    char *content = NULL;
    mcpaxle_elicitation_apply_defaults(schema ? schema : "{}", NULL, &content);
    size_t n = schema ? length(schema, "/required") : 0;
    for (size_t i = 0; i < n; i++) {
        char *ptr = fmt("/required/%zu", i);
        char *name = get_string(schema, ptr);
        char *have_ptr = fmt("/%s", name ? name : "");
        char *have = get(content, have_ptr);
        if (name && !have) {
            char *prop_ptr = fmt("/properties/%s", name);
            char *prop = get(schema, prop_ptr);
            char *value = sample_value(name, prop);
            char *q = NULL;
            mcpaxle_json_quote(name, &q);
            size_t len = strlen(content);
            char *next = fmt("%.*s%s%s:%s}", (int)(len - 1), content, len > 2 ? "," : "", q, value);
            mcpaxle_string_free(content);
            mcpaxle_json_get(next, "", &content);
            free(next), mcpaxle_string_free(q), mcpaxle_string_free(value), mcpaxle_string_free(prop), free(prop_ptr);
        }
        mcpaxle_string_free(have), free(have_ptr), mcpaxle_string_free(name), free(ptr);
    }
    char *answer = fmt("{\"action\":\"accept\",\"content\":%s}", content ? content : "{}");
    mcpaxle_reply_ok(c, answer);
    free(answer), mcpaxle_string_free(content), mcpaxle_string_free(schema);
}

static void on_sampling(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    mcpaxle_reply_ok(c, "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"This is a sampled answer from the "
                             "everything client.\"},\"model\":\"mcpaxle-everything-client\",\"stopReason\":\"endTurn\"}");
}

static void on_roots(void *ud, const char *params, mcpaxle_reply *c) {
    (void)ud, (void)params;
    mcpaxle_reply_ok(c, "{\"roots\":[{\"uri\":\"file:///tmp/mcpaxle-conformance\",\"name\":\"conformance\"}]}");
}

/* Every tool, following nextCursor: a JSON array (free with free()). */
static mcpaxle_result list_all(mcpaxle_client *client, const char *kind, char **out) {
    char *items = strdup("[");
    char *cursor = NULL;
    mcpaxle_result r = MCPAXLE_OK;
    for (int page = 0; page < 100; page++) {
        char *result = NULL;
        if (strcmp(kind, "tools") == 0)
            r = mcpaxle_client_list_tools(client, cursor, NULL, &result);
        else if (strcmp(kind, "resources") == 0)
            r = mcpaxle_client_list_resources(client, cursor, NULL, &result);
        else
            r = mcpaxle_client_list_prompts(client, cursor, NULL, &result);
        mcpaxle_string_free(cursor);
        cursor = NULL;
        if (r != MCPAXLE_OK) break;
        char *ptr = fmt("/%s", kind);
        size_t n = length(result, ptr);
        for (size_t i = 0; i < n; i++) {
            char *item_ptr = fmt("/%s/%zu", kind, i);
            char *item = get(result, item_ptr);
            char *next = fmt("%s%s%s", items, strlen(items) > 1 ? "," : "", item);
            free(items);
            items = next;
            mcpaxle_string_free(item), free(item_ptr);
        }
        free(ptr);
        cursor = get_string(result, "/nextCursor");
        mcpaxle_string_free(result);
        if (!cursor) break;
    }
    mcpaxle_string_free(cursor);
    *out = fmt("%s]", items);
    free(items);
    return r;
}

static mcpaxle_result call(mcpaxle_client *client, const char *name, const char *args) {
    char *result = NULL;
    mcpaxle_result r = mcpaxle_client_call_tool(client, name, args, NULL, &result);
    if (r == MCPAXLE_OK) {
        char *is_error = get(result, "/isError");
        fprintf(stderr, "called %s: isError=%s\n", name, is_error ? is_error : "null");
        mcpaxle_string_free(is_error);
    }
    mcpaxle_string_free(result);
    return r;
}

static mcpaxle_result call_each(mcpaxle_client *client, const char *tools) {
    size_t n = length(tools, "");
    for (size_t i = 0; i < n; i++) {
        char *ptr = fmt("/%zu", i);
        char *tool = get(tools, ptr);
        char *name = get_string(tool, "/name");
        char *args = sample_arguments(tool);
        mcpaxle_result r = call(client, name, args);
        free(args), mcpaxle_string_free(name), mcpaxle_string_free(tool), free(ptr);
        if (r != MCPAXLE_OK) return r;
    }
    return MCPAXLE_OK;
}

/* sep-2322-client-request-state: four calls at once, with the async API. */
struct pending {
    pthread_mutex_t lock;
    pthread_cond_t done;
    int left;
    mcpaxle_result first_error;
};

static void on_result(void *ud, mcpaxle_result code, const char *json) {
    struct pending *p = ud;
    fprintf(stderr, "async result: %s %s\n", mcpaxle_result_name(code), json);
    pthread_mutex_lock(&p->lock);
    if (code != MCPAXLE_OK && p->first_error == MCPAXLE_OK) p->first_error = code;
    if (--p->left == 0) pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->lock);
}

static mcpaxle_result call_concurrently(mcpaxle_client *client, const char **names, int n) {
    struct pending p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, MCPAXLE_OK};
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&p.lock);
        p.left++;
        pthread_mutex_unlock(&p.lock);
        mcpaxle_result r = mcpaxle_client_call_tool_async(client, names[i], "{}", NULL, &p, on_result);
        if (r != MCPAXLE_OK) {
            pthread_mutex_lock(&p.lock);
            p.left--;
            pthread_mutex_unlock(&p.lock);
            return r;
        }
    }
    pthread_mutex_lock(&p.lock);
    while (p.left > 0) pthread_cond_wait(&p.done, &p.lock);
    pthread_mutex_unlock(&p.lock);
    return p.first_error;
}

static mcpaxle_result run(mcpaxle_client *client, const char *scenario, const char *context) {
    char *tools = NULL;
    mcpaxle_result r = list_all(client, "tools", &tools);
    if (r != MCPAXLE_OK) return r;
    fprintf(stderr, "tools: %s\n", tools);
    if (!strcmp(scenario, "initialize") || !strcmp(scenario, "request-metadata") || !strcmp(scenario, "json-schema-ref-no-deref")) {
        r = MCPAXLE_OK;
    } else if (!strcmp(scenario, "tools_call")) {
        r = call(client, "add_numbers", "{\"a\":5,\"b\":3}");
    } else if (!strcmp(scenario, "sep-2322-client-request-state")) {
        const char *names[] = {"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"};
        r = call_concurrently(client, names, 4);
    } else if (!strcmp(scenario, "http-standard-headers")) {
        r = call_each(client, tools);
        char *list = NULL;
        if (r == MCPAXLE_OK) r = list_all(client, "resources", &list);
        for (size_t i = 0; r == MCPAXLE_OK && i < length(list, ""); i++) {
            char *ptr = fmt("/%zu/uri", i), *uri = get_string(list, ptr), *result = NULL;
            r = mcpaxle_client_read_resource(client, uri, NULL, &result);
            mcpaxle_string_free(result), mcpaxle_string_free(uri), free(ptr);
        }
        free(list);
        list = NULL;
        if (r == MCPAXLE_OK) r = list_all(client, "prompts", &list);
        for (size_t i = 0; r == MCPAXLE_OK && i < length(list, ""); i++) {
            char *ptr = fmt("/%zu/name", i), *name = get_string(list, ptr), *result = NULL;
            r = mcpaxle_client_get_prompt(client, name, NULL, NULL, &result);
            mcpaxle_string_free(result), mcpaxle_string_free(name), free(ptr);
        }
        free(list);
    } else if (!strcmp(scenario, "http-custom-headers")) {
        size_t n = context ? length(context, "/toolCalls") : 0;
        for (size_t i = 0; r == MCPAXLE_OK && i < n; i++) {
            char *np = fmt("/toolCalls/%zu/name", i), *ap = fmt("/toolCalls/%zu/arguments", i);
            char *name = get_string(context, np), *args = get(context, ap);
            r = call(client, name ? name : "", args ? args : "{}");
            mcpaxle_string_free(name), mcpaxle_string_free(args), free(np), free(ap);
        }
    } else if (!strcmp(scenario, "json-schema-2020-12-preservation")) {
        char *schema = NULL;
        for (size_t i = 0; i < length(tools, ""); i++) {
            char *np = fmt("/%zu/name", i), *name = get_string(tools, np);
            if (name && !strcmp(name, "json_schema_2020_12_tool")) {
                char *sp = fmt("/%zu/inputSchema", i);
                schema = get(tools, sp);
                free(sp);
            }
            mcpaxle_string_free(name), free(np);
        }
        if (schema) {
            char *args = fmt("{\"schema\":%s}", schema);
            r = call(client, "json_schema_echo", args);
            free(args), mcpaxle_string_free(schema);
        } else {
            r = MCPAXLE_ERR_USAGE;
        }
    } else if (!strcmp(scenario, "elicitation-sep1034-client-defaults")) {
        r = call(client, "test_client_elicitation_defaults", "{}");
    } else if (!strcmp(scenario, "sse-retry")) {
        r = call(client, "test_reconnection", "{}");
    } else {
        r = call_each(client, tools); /* http-invalid-tool-headers, and anything else */
    }
    free(tools);
    return r;
}

/* OAuth with the redirect followed by the client, and the context's pre-registered
 * credentials when it has them; for the auth/client-credentials-* scenarios, the client
 * credentials grant with the context's secret or private key (private_key_jwt). */
static mcpaxle_result set_oauth(mcpaxle_client_options *opts, const char *scenario, const char *context) {
    bool machine = strncmp(scenario, "auth/client-credentials", strlen("auth/client-credentials")) == 0;
    char *oauth = strdup(machine ? "{\"grantType\":\"client_credentials\""
                                 : "{\"redirectUri\":\"" REDIRECT_URI "\",\"clientMetadataUrl\":\"" CLIENT_METADATA_URL "\"");
    const char *members[][2] = {{"/client_id", "clientId"},
                                {"/client_secret", "clientSecret"},
                                {"/issuer", "issuer"},
                                {"/private_key_pem", "privateKeyPem"},
                                {"/signing_algorithm", "signingAlgorithm"}};
    char *id = context ? get(context, "/client_id") : NULL;
    for (size_t i = 0; id && id[0] == '"' && i < sizeof members / sizeof members[0]; i++) {
        char *value = get(context, members[i][0]); /* JSON text: a string is copied as it is */
        if (value && value[0] == '"') {
            char *next = fmt("%s,\"%s\":%s", oauth, members[i][1], value);
            free(oauth);
            oauth = next;
        }
        mcpaxle_string_free(value);
    }
    mcpaxle_string_free(id);
    char *json = fmt("%s}", oauth);
    mcpaxle_result r = mcpaxle_client_options_set_oauth(opts, json, NULL, NULL);
    free(json), free(oauth);
    return r;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: everything_client SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)\n");
        return 2;
    }
    const char *url = argv[argc - 1];
    const char *scenario = getenv("MCP_CONFORMANCE_SCENARIO");
    const char *version = getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
    const char *context = getenv("MCP_CONFORMANCE_CONTEXT");
    if (!scenario) scenario = "";
    if (!version) version = "2026-07-28";
    if (context) {
        char *check = NULL;
        if (mcpaxle_json_get(context, "", &check) != MCPAXLE_OK) context = NULL;
        mcpaxle_string_free(check);
    }
    fprintf(stderr, "everything_client: scenario \"%s\", protocol %s, server %s\n", scenario, version, url);

    char *q = NULL;
    mcpaxle_json_quote(version, &q);
    char *opts_json = fmt("{\"protocolVersions\":[%s],\"requestTimeoutMs\":25000}", q);
    mcpaxle_string_free(q);
    mcpaxle_client_options *opts = NULL;
    mcpaxle_result r = mcpaxle_client_options_new("mcpaxle-everything-client", mcpaxle_version(), opts_json, &opts);
    free(opts_json);
    if (r != MCPAXLE_OK) return fail("options", r);
    mcpaxle_client_options_on_elicitation(opts, on_elicitation, NULL);
    mcpaxle_client_options_on_sampling(opts, on_sampling, NULL);
    mcpaxle_client_options_on_roots(opts, on_roots, NULL);
    r = set_oauth(opts, scenario, context);
    if (r != MCPAXLE_OK) {
        mcpaxle_client_options_free(opts);
        return fail("oauth", r);
    }

    mcpaxle_client *client = NULL;
    r = mcpaxle_client_connect_http(url, opts, &client);
    mcpaxle_client_options_free(opts);
    if (r != MCPAXLE_OK) return fail("connect", r);
    char *info = NULL;
    mcpaxle_client_info(client, &info);
    fprintf(stderr, "connected: %s\n", info);
    mcpaxle_string_free(info);

    r = run(client, scenario, context);
    int code = r == MCPAXLE_OK ? 0 : fail(scenario, r);
    mcpaxle_client_free(client);
    return code;
}

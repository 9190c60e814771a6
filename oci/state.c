/*
 * Reading the container state a runtime writes to a hook's stdin, with
 * jansson: the whole document is checked before anything is taken from it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "state.h"

/* All of fp into a malloc'd buffer; NULL with err set. */
static char *
input_slurp(FILE *fp, size_t *len, char *err, size_t errlen)
{
	char *buf;
	size_t n = 0, r;

	if ((buf = malloc(OCI_STATE_MAX + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	while ((r = fread(buf + n, 1, OCI_STATE_MAX + 1 - n, fp)) > 0)
		if ((n += r) > OCI_STATE_MAX)
			break;
	if (ferror(fp)) {
		snprintf(err, errlen, "cannot read the container state on "
		    "stdin");
		goto out_free;
	}
	if (n > OCI_STATE_MAX) {
		snprintf(err, errlen, "the container state on stdin is "
		    "larger than %d bytes", OCI_STATE_MAX);
		goto out_free;
	}
	*len = n;
	return buf;

out_free:
	free(buf);
	return NULL;
}

/* Printable: no control character that would break a message's line. */
static int
printable(const char *s, size_t len)
{
	size_t i;

	if (strlen(s) != len)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int
id_take(json_t *root, struct oci_state *st, char *err, size_t errlen)
{
	json_t *v = json_object_get(root, "id");

	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    !printable(json_string_value(v), json_string_length(v))) {
		snprintf(err, errlen, "the container state has no id, or a "
		    "bad one");
		return -1;
	}
	if ((st->id = strdup(json_string_value(v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * The status says the stage the hook is called at, when its arguments do
 * not; required by the runtime spec, but a hook given its stage can do
 * without it.
 */
static int
status_take(json_t *root, struct oci_state *st, char *err, size_t errlen)
{
	json_t *v = json_object_get(root, "status");

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v) ||
	    !printable(json_string_value(v), json_string_length(v))) {
		snprintf(err, errlen, "container '%s': bad status in its "
		    "state", st->id);
		return -1;
	}
	if ((st->status = strdup(json_string_value(v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* The bundle, where the runtime keeps the container's config.json. */
static int
bundle_take(json_t *root, struct oci_state *st, char *err, size_t errlen)
{
	json_t *v = json_object_get(root, "bundle");

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
	    !printable(json_string_value(v), json_string_length(v))) {
		snprintf(err, errlen, "container '%s': bad bundle in its "
		    "state (expected an absolute path)", st->id);
		return -1;
	}
	if ((st->bundle = strdup(json_string_value(v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* The pid is absent, or 0, once the container has stopped. */
static int
pid_take(json_t *root, struct oci_state *st, char *err, size_t errlen)
{
	json_t *v = json_object_get(root, "pid");
	json_int_t pid;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || (pid = json_integer_value(v)) < 0 ||
	    pid > INT32_MAX) {
		snprintf(err, errlen, "container '%s': bad pid in its state",
		    st->id);
		return -1;
	}
	st->pid = (uint32_t)pid;
	return 0;
}

static int
annot_add(struct oci_state *st, const char *key, json_t *v, char *err,
    size_t errlen)
{
	struct oci_annot *a;

	if (!printable(key, strlen(key))) {
		snprintf(err, errlen, "container '%s': an annotation "
		    "'%s...' has a control character in its name", st->id,
		    OCI_ANNOT_PREFIX);
		return -1;
	}
	if (!json_is_string(v) ||
	    !printable(json_string_value(v), json_string_length(v))) {
		snprintf(err, errlen, "container '%s': annotation '%s' is "
		    "not a string of printable characters", st->id, key);
		return -1;
	}
	a = reallocarray(st->annots, st->nannots + 1, sizeof(*a));
	if (a == NULL)
		goto nomem;
	st->annots = a;
	a = &st->annots[st->nannots];
	a->name = strdup(key + strlen(OCI_ANNOT_PREFIX));
	a->value = strdup(json_string_value(v));
	if (a->name == NULL || a->value == NULL) {
		free(a->name);
		free(a->value);
		goto nomem;
	}
	st->nannots++;
	return 0;

nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The annotations map is optional ("MAY either be absent or empty"). */
static int
annots_take(json_t *root, struct oci_state *st, char *err, size_t errlen)
{
	json_t *map = json_object_get(root, "annotations"), *v;
	const char *key;

	if (map == NULL || json_is_null(map))
		return 0;
	if (!json_is_object(map)) {
		snprintf(err, errlen, "container '%s': its annotations are "
		    "not a JSON object", st->id);
		return -1;
	}
	json_object_foreach(map, key, v) {
		if (strncmp(key, OCI_ANNOT_PREFIX,
		    strlen(OCI_ANNOT_PREFIX)) != 0)
			continue;
		if (annot_add(st, key, v, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int
oci_state_read(FILE *fp, struct oci_state *st, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root;
	size_t len;
	char *buf;
	int r = -1;

	memset(st, 0, sizeof(*st));
	if ((buf = input_slurp(fp, &len, err, errlen)) == NULL)
		return -1;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (root == NULL) {
		snprintf(err, errlen, "cannot parse the container state on "
		    "stdin: %s (line %d, column %d)", jerr.text, jerr.line,
		    jerr.column);
		return -1;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "the container state on stdin is not a "
		    "JSON object");
		goto out_put;
	}
	if (id_take(root, st, err, errlen) < 0 ||
	    status_take(root, st, err, errlen) < 0 ||
	    pid_take(root, st, err, errlen) < 0 ||
	    bundle_take(root, st, err, errlen) < 0 ||
	    annots_take(root, st, err, errlen) < 0) {
		oci_state_free(st);
		goto out_put;
	}
	r = 0;

out_put:
	json_decref(root);
	return r;
}

const char *
oci_state_annot(const struct oci_state *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nannots; i++)
		if (strcmp(st->annots[i].name, name) == 0)
			return st->annots[i].value;
	return NULL;
}

void
oci_state_free(struct oci_state *st)
{
	size_t i;

	for (i = 0; i < st->nannots; i++) {
		free(st->annots[i].name);
		free(st->annots[i].value);
	}
	free(st->annots);
	free(st->status);
	free(st->bundle);
	free(st->id);
	memset(st, 0, sizeof(*st));
}

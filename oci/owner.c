/*
 * A container's user on the host, from its bundle's config.json.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "owner.h"

/* An id in 0..UINT32_MAX-1 (-1 is no id) at key of o, into *id: 0 or -1. */
static int
id_get(json_t *o, const char *key, uint32_t *id)
{
	json_t *v = json_object_get(o, key);
	json_int_t n;

	if (!json_is_integer(v) || (n = json_integer_value(v)) < 0 ||
	    n >= UINT32_MAX)
		return -1;
	*id = (uint32_t)n;
	return 0;
}

/*
 * id in the container through maps (linux.uidMappings or gidMappings;
 * none: no user namespace, the ids are the host's) onto *host: 0, or -1
 * when a map is bad or does not hold id.
 */
static int
id_map(json_t *maps, uint32_t id, uint32_t *host)
{
	uint32_t inside, outside, size;
	json_t *m;
	size_t i;

	if (maps == NULL || json_is_null(maps)) {
		*host = id;
		return 0;
	}
	if (!json_is_array(maps))
		return -1;
	json_array_foreach(maps, i, m) {
		if (id_get(m, "containerID", &inside) < 0 ||
		    id_get(m, "hostID", &outside) < 0 ||
		    id_get(m, "size", &size) < 0)
			return -1;
		if (id >= inside && id - inside < size &&
		    (uint64_t)outside + (id - inside) < UINT32_MAX) {
			*host = outside + (id - inside);
			return 0;
		}
	}
	return -1;
}

int
oci_owner_read(const char *bundle, uint32_t *uid, uint32_t *gid, char *err,
    size_t errlen)
{
	char path[4096];
	json_error_t jerr;
	json_t *root, *user, *linux;
	uint32_t u, g;
	int rc = -1;

	if (snprintf(path, sizeof(path), "%s/config.json", bundle) >=
	    (int)sizeof(path)) {
		snprintf(err, errlen, "bundle path too long: '%s'", bundle);
		return -1;
	}
	if ((root = json_load_file(path, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		snprintf(err, errlen, "cannot read '%s': %s", path, jerr.text);
		return -1;
	}
	user = json_object_get(json_object_get(root, "process"), "user");
	linux = json_object_get(root, "linux");
	if (id_get(user, "uid", &u) < 0 || id_get(user, "gid", &g) < 0)
		snprintf(err, errlen, "'%s': no process.user uid and gid",
		    path);
	else if (id_map(json_object_get(linux, "uidMappings"), u, uid) < 0 ||
	    id_map(json_object_get(linux, "gidMappings"), g, gid) < 0)
		snprintf(err, errlen, "'%s': user %u:%u is not mapped to the "
		    "host by its linux.uidMappings and gidMappings", path, u,
		    g);
	else
		rc = 0;
	json_decref(root);
	return rc;
}

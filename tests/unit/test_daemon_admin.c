/*
 * daemon/admin.c: root, the primary group, supplementary groups from the
 * socket (SO_PEERGROUPS) and from /proc/PID/status text, and the message a
 * refused peer gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../daemon/admin.h"
#include "../../daemon/config.h"

static void
test_status_groups(void **state)
{
	static const char status[] =
	    "Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\n"
	    "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n"
	    "FDSize:\t256\nGroups:\t4 24 27 1000 4242 \nNStgid:\t1\n";

	(void)state;
	assert_int_equal(admin_status_has_gid(status, 4242), 1);
	assert_int_equal(admin_status_has_gid(status, 4), 1);
	assert_int_equal(admin_status_has_gid(status, 24), 1);
	assert_int_equal(admin_status_has_gid(status, 42), 0);
	assert_int_equal(admin_status_has_gid(status, 1), 0);
	assert_int_equal(admin_status_has_gid("Groups:\t\nX:\t7\n", 7), 0);
	assert_int_equal(admin_status_has_gid("Name:\tx\n", 0), 0);
	assert_int_equal(admin_status_has_gid("Groups:\t5", 5), 1);
	assert_int_equal(admin_status_has_gid("", 0), 0);
}

/* A gid that is not among ours. */
static gid_t
foreign_gid(const gid_t *groups, int n)
{
	gid_t g = 4242;
	int i;

	for (i = 0; i < n; i++)
		if (groups[i] == g) {
			g++;
			i = -1;
		}
	return g;
}

static void
test_allowed(void **state)
{
	struct config c;
	gid_t groups[64], other;
	uint32_t me = (uint32_t)getpid();
	int sv[2], n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_true((n = getgroups(64, groups)) >= 0);
	other = foreign_gid(groups, n);
	config_init(&c);
	/* root always; nobody else without an admin_group */
	assert_int_equal(admin_allowed(&c, sv[0], me, 0, 0), ADMIN_ALLOWED);
	assert_int_equal(admin_allowed(&c, sv[0], me, 1000, 0), ADMIN_DENIED);
	/* but not from a pid that is not there to be asked */
	assert_int_equal(admin_allowed(&c, sv[0], 0, 0, 0), ADMIN_FOREIGN);
	/* the admin group's gid as the primary group */
	c.admin_gid_valid = 1;
	c.admin_gid = other;
	assert_int_equal(admin_allowed(&c, sv[0], me, 1000, other),
	    ADMIN_ALLOWED);
	assert_int_equal(admin_allowed(&c, sv[0], me, 1000, other + 1),
	    ADMIN_DENIED);
	/* ... or among the supplementary groups of the peer (ourselves,
	 * for a socketpair), if we have any */
	if (n > 0) {
		c.admin_gid = groups[n - 1];
		assert_int_equal(admin_allowed(&c, sv[0], me, 1000, other),
		    ADMIN_ALLOWED);
	} else
		print_message("no supplementary groups: not tested\n");
	close(sv[0]);
	close(sv[1]);
	config_free(&c);
}

static void
test_denied_msg(void **state)
{
	struct config c;
	char msg[GF_ERRMSG_LEN];

	(void)state;
	config_init(&c);
	admin_denied_msg(&c, "reload", ADMIN_DENIED, msg, sizeof(msg));
	assert_string_equal(msg, "reload: permission denied (root only)");
	admin_denied_msg(&c, "group set", ADMIN_FOREIGN, msg, sizeof(msg));
	assert_string_equal(msg, "group set: permission denied (not from the "
	    "daemon's pid namespace: a container's root is not the "
	    "machine's)");
	strcpy(c.admin_group, "gpufrac");
	admin_denied_msg(&c, "reload", ADMIN_DENIED, msg, sizeof(msg));
	assert_string_equal(msg, "reload: permission denied (root or "
	    "members of group 'gpufrac' only)");
	config_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_groups),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_denied_msg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

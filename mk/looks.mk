# How long memory held past a limit without the shim goes unseen between
# the daemon's looks, and what the glance between them costs
# (bench/looks.sh, issue 38; about 3 minutes).
PHONY += bench-looks

bench-looks: all $(O)/tests/clients/burst_linked $(O)/tests/clients/nvml_query
	bench/looks.sh $(O)

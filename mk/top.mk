# gpufracctl top draws its screen with ncurses (tools/ctl_top_screen.c);
# tests/integration/top.sh drives it inside tmux.
CTL_LIBS += -lncursesw
BUILD_DEPS += libncurses-dev
DEPS += tmux

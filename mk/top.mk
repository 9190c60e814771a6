# gpufracctl top draws its screen with ncurses (tools/ctl_top_screen.c);
# tests/integration/top.sh drives it inside tmux.
CTL_LIBS += -lncursesw
DEPS += libncurses-dev tmux

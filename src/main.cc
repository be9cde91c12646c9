#include "cli/app.h"

int main(int argc, char** argv) { return mgk::cli::run(argc, argv); }

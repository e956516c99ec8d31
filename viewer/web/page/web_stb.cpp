// web_stb.cpp — stb_image_write's and stb_truetype's implementations for the web edition (the
// desktop links Debian's libstb, which holds both). ImGui keeps its own static copy of stb_truetype.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>

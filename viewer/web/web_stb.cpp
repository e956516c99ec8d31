// web_stb.cpp — stb_image_write's implementation for the web edition (the desktop links Debian's libstb).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

// Fixture of tests/style/test-function-length.py: a member function (run, 153 lines) and a
// template specialisation inside extern "C" and a struct; only run is too long.
#include <cuda_runtime.h>

template <typename T> __device__ float load_f32(const T *p, int i);
template <> __device__ float load_f32<float>(const float *p, int i) { return p[i]; }

extern "C" {

struct Launcher {
    template <typename T>
    static int run(const T *x, int n) {
        int total = 0;
        total += 0; /* { not a brace */
        total += 1;
        total += 2;
        total += 3;
        total += 4;
        total += 5;
        total += 6;
        total += 7; /* { not a brace */
        total += 8;
        total += 9;
        total += 10;
        total += 11;
        total += 12;
        total += 13;
        total += 14; /* { not a brace */
        total += 15;
        total += 16;
        total += 17;
        total += 18;
        total += 19;
        total += 20;
        total += 21; /* { not a brace */
        total += 22;
        total += 23;
        total += 24;
        total += 25;
        total += 26;
        total += 27;
        total += 28; /* { not a brace */
        total += 29;
        total += 30;
        total += 31;
        total += 32;
        total += 33;
        total += 34;
        total += 35; /* { not a brace */
        total += 36;
        total += 37;
        total += 38;
        total += 39;
        total += 40;
        total += 41;
        total += 42; /* { not a brace */
        total += 43;
        total += 44;
        total += 45;
        total += 46;
        total += 47;
        total += 48;
        total += 49; /* { not a brace */
        total += 50;
        total += 51;
        total += 52;
        total += 53;
        total += 54;
        total += 55;
        total += 56; /* { not a brace */
        total += 57;
        total += 58;
        total += 59;
        total += 60;
        total += 61;
        total += 62;
        total += 63; /* { not a brace */
        total += 64;
        total += 65;
        total += 66;
        total += 67;
        total += 68;
        total += 69;
        total += 70; /* { not a brace */
        total += 71;
        total += 72;
        total += 73;
        total += 74;
        total += 75;
        total += 76;
        total += 77; /* { not a brace */
        total += 78;
        total += 79;
        total += 80;
        total += 81;
        total += 82;
        total += 83;
        total += 84; /* { not a brace */
        total += 85;
        total += 86;
        total += 87;
        total += 88;
        total += 89;
        total += 90;
        total += 91; /* { not a brace */
        total += 92;
        total += 93;
        total += 94;
        total += 95;
        total += 96;
        total += 97;
        total += 98; /* { not a brace */
        total += 99;
        total += 100;
        total += 101;
        total += 102;
        total += 103;
        total += 104;
        total += 105; /* { not a brace */
        total += 106;
        total += 107;
        total += 108;
        total += 109;
        total += 110;
        total += 111;
        total += 112; /* { not a brace */
        total += 113;
        total += 114;
        total += 115;
        total += 116;
        total += 117;
        total += 118;
        total += 119; /* { not a brace */
        total += 120;
        total += 121;
        total += 122;
        total += 123;
        total += 124;
        total += 125;
        total += 126; /* { not a brace */
        total += 127;
        total += 128;
        total += 129;
        total += 130;
        total += 131;
        total += 132;
        total += 133; /* { not a brace */
        total += 134;
        total += 135;
        total += 136;
        total += 137;
        total += 138;
        total += 139;
        total += 140; /* { not a brace */
        total += 141;
        total += 142;
        total += 143;
        total += 144;
        total += 145;
        total += 146;
        total += 147; /* { not a brace */
        total += 148;
        return total + n + (int)x[0];
    }
};

int launch(const float *x, int n) { return Launcher::run<float>(x, n); }

}  // extern "C"

;; Attention Lens, the page's one product in WebAssembly SIMD: y = x W^T + b, the nn.Linear of every layer and the
;; output layer (transformer.js). Assembled into kernels.wasm by `npm run wasm` (wabt); tests/js/kernels.test.js
;; checks that the two agree. Every argument is a byte offset into the module's memory or a count:
;; x (rows, n_in), W (n_out, n_in) row-major as torch keeps it, b (n_out) unless has_bias is 0, y (rows, n_out).
;; n_in must be a multiple of 16: four lanes by four accumulators a pass. Each output row of W is read once for all
;; the rows of x (the rows loop inside).
(module
  (memory (export "memory") 1)
  (func (export "linear") (param $x i32) (param $rows i32) (param $w i32) (param $b i32) (param $has_bias i32)
        (param $n_in i32) (param $n_out i32) (param $y i32)
    (local $r i32) (local $o i32) (local $i i32) (local $xr i32) (local $wo i32) (local $end i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $s f32)
    (local.set $o (i32.const 0))
    (block $outs_done
      (loop $outs_loop
        (br_if $outs_done (i32.ge_u (local.get $o) (local.get $n_out)))
        (local.set $wo (i32.add (local.get $w) (i32.shl (i32.mul (local.get $o) (local.get $n_in)) (i32.const 2))))
        (local.set $r (i32.const 0))
        (block $rows_done
          (loop $rows_loop
            (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
            (local.set $xr (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $n_in)) (i32.const 2))))
            (local.set $a0 (v128.const f32x4 0 0 0 0))
            (local.set $a1 (v128.const f32x4 0 0 0 0))
            (local.set $a2 (v128.const f32x4 0 0 0 0))
            (local.set $a3 (v128.const f32x4 0 0 0 0))
            (local.set $i (i32.const 0))
            (local.set $end (i32.shl (local.get $n_in) (i32.const 2)))
            (block $dot_done
              (loop $dot_loop
                (br_if $dot_done (i32.ge_u (local.get $i) (local.get $end)))
                (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
                  (v128.load (i32.add (local.get $xr) (local.get $i)))
                  (v128.load (i32.add (local.get $wo) (local.get $i))))))
                (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul
                  (v128.load offset=16 (i32.add (local.get $xr) (local.get $i)))
                  (v128.load offset=16 (i32.add (local.get $wo) (local.get $i))))))
                (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul
                  (v128.load offset=32 (i32.add (local.get $xr) (local.get $i)))
                  (v128.load offset=32 (i32.add (local.get $wo) (local.get $i))))))
                (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul
                  (v128.load offset=48 (i32.add (local.get $xr) (local.get $i)))
                  (v128.load offset=48 (i32.add (local.get $wo) (local.get $i))))))
                (local.set $i (i32.add (local.get $i) (i32.const 64)))
                (br $dot_loop)))
            (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
            (local.set $s (f32.add
              (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
              (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
            (if (local.get $has_bias)
              (then (local.set $s (f32.add (local.get $s)
                (f32.load (i32.add (local.get $b) (i32.shl (local.get $o) (i32.const 2))))))))
            (f32.store (i32.add (local.get $y)
              (i32.shl (i32.add (i32.mul (local.get $r) (local.get $n_out)) (local.get $o)) (i32.const 2))) (local.get $s))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $rows_loop)))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (br $outs_loop)))))

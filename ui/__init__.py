"""The page, one module per view: widgets and wiring only; the model work lives in lens/.

A view is a module with `build(translator) -> dict` that creates its widgets inside the Blocks
being built (app.py calls it) and wires them to lens/ functions. A view that draws maps sends
one explanation (see ui.payload.page_payload) to a gr.HTML made by
ui.assets.viewer_component(view=...), and the browser draws it with ui/static/ (no server
round trip when the user switches kind, layer, head, view or token).

Running the model (ZeroGPU rules, ui/runtime.py): wrap exactly the function that runs the model
in `@gpu(duration=GpuTime(cap=S))` from ui.runtime and ui.gpu_time: seconds sized to each request, at most S
(translate 20, explain 30; each cap under ui.runtime.MAX_GPU_SECONDS). Check the user's input before calling it
(ui.runtime.checked_text, decoding_options: a ValueError naming the argument); return numpy
arrays and Python values only, never a torch tensor (gpu() refuses one). A ValueError/TypeError
raised inside still reaches the user with its message. Keep nothing large per user: a gr.State
gets time_to_live=ui.public.STATE_TTL_S (and a delete_callback if it holds anything to release).
"""
